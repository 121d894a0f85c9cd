//! The event log's contract: concurrent appends, convergence through a bare remote, crash safety, fsck.

use std::collections::HashSet;
use std::process::Stdio;
use std::time::Duration;

use git_jules::store::eventlog::cache::Refresh;
use git_jules::store::eventlog::stats::LogStats;
use git_jules::store::eventlog::{Event, Log, NewEvent};

use crate::harness::{json_items, open, stderr, stdout, with_stdin, Repo};

/// (actor, seq) of every event of `log` as `git jules log show --json` reports them, in order.
fn shown(r: &Repo, log: &str) -> Vec<(String, String, u64)> {
    let out = r.jules_ok(["log", "show", log, "--json"]);
    let rows = json_items(&out);
    rows.iter()
        .map(|row| {
            (
                row["id"].as_str().unwrap().to_owned(),
                row["event"]["actor"].as_str().unwrap().to_owned(),
                row["event"]["data"]["seq"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

#[test]
fn eight_processes_append_500_events_each_concurrently() {
    let r = Repo::new();
    let children: Vec<_> = (0..8)
        .map(|p| {
            r.jules_cmd([
                "log",
                "append",
                "mail",
                "--kind",
                "load.test",
                "--actor",
                &format!("p{p}"),
                "--repeat",
                "500",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "appender failed: {}", stderr(&out));
    }
    let events = shown(&r, "mail");
    assert_eq!(events.len(), 4000);
    let distinct: HashSet<(String, u64)> = events.iter().map(|(_, a, s)| (a.clone(), *s)).collect();
    assert_eq!(distinct.len(), 4000, "an event was lost or duplicated");
    for p in 0..8 {
        for seq in 0..500 {
            assert!(distinct.contains(&(format!("p{p}"), seq)));
        }
    }
    // The ref is a valid log: every commit an event, a linear chain of exactly 4000 commits.
    let fsck = r.jules_ok(["log", "fsck", "mail", "--json"]);
    let report = json_items(&fsck);
    assert_eq!(report[0]["commits"], 4000);
    assert_eq!(report[0]["invalid"].as_array().unwrap().len(), 0);
    assert_eq!(r.git(["rev-list", "--count", "refs/jules/mail"]), "4000");
    r.git(["fsck", "--no-progress"]);
}

fn permutations() -> Vec<[usize; 3]> {
    vec![
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ]
}

#[test]
fn three_clones_converge_through_a_bare_remote_in_every_order() {
    for order in permutations() {
        let origin = Repo::new();
        let bare = origin.bare_sibling();
        origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
        let clones: Vec<Repo> = (0..3).map(|_| origin.clone_of(bare.path())).collect();
        for (i, c) in clones.iter().enumerate() {
            c.jules_ok([
                "log",
                "append",
                "mail",
                "--kind",
                "t.offline",
                "--actor",
                &format!("c{i}"),
                "--repeat",
                "3",
            ]);
            c.jules_ok([
                "log",
                "append",
                "state",
                "--kind",
                "t.state",
                "--actor",
                &format!("c{i}"),
            ]);
        }
        // Everyone syncs once in this order, then the first two again to pick up what came after them.
        for &i in order.iter().chain(&order[..2]) {
            clones[i].jules_ok(["sync"]);
        }
        let views: Vec<_> = clones
            .iter()
            .map(|c| (shown(c, "mail"), shown(c, "state")))
            .collect();
        assert_eq!(views[0].0.len(), 9, "order {order:?}");
        assert_eq!(views[0].1.len(), 3, "order {order:?}");
        assert!(
            views.iter().all(|v| *v == views[0]),
            "views differ for order {order:?}"
        );
        let tips: Vec<_> = clones.iter().map(|c| c.rev("refs/jules/mail")).collect();
        assert!(tips.iter().all(|t| *t == tips[0]));
        assert_eq!(bare.rev("refs/jules/mail"), tips[0]);
        // A second sync changes nothing anywhere.
        for c in &clones {
            let out = c.jules(["sync", "--json"]);
            assert!(out.status.success(), "{}", stderr(&out));
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            for r in report["refs"].as_array().unwrap() {
                assert_eq!(r["action"], "up-to-date", "order {order:?}: {report}");
            }
            assert_eq!(c.rev("refs/jules/mail"), tips[0]);
        }
    }
}

#[test]
fn plain_git_fetch_and_push_carry_logs_after_init() {
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let a = origin.clone_of(bare.path());
    let b = origin.clone_of(bare.path());
    for c in [&a, &b] {
        let first = c.jules(["init"]);
        assert!(first.status.success());
        assert!(
            stderr(&first).contains("refs/jules/*"),
            "{}",
            stderr(&first)
        );
        // Idempotent: a second init adds nothing.
        let again = c.jules_ok(["init", "--json"]);
        let reports = json_items(&again);
        assert_eq!(reports[0]["added"].as_array().unwrap().len(), 0, "{again}");
    }
    a.jules_ok(["log", "append", "mail", "--kind", "t.x", "--actor", "alice"]);
    a.git(["push", "-q"]);
    assert!(
        bare.rev("refs/jules/mail").is_some(),
        "plain push did not carry the log"
    );
    b.git(["fetch", "-q"]);
    // Fetched into the remote-tracking copy, and readers see it at once.
    assert!(b.rev("refs/remotes/origin/jules/mail").is_some());
    assert!(b.rev("refs/jules/mail").is_none());
    assert_eq!(shown(&b, "mail").len(), 1);
    // b appends on its own (divergent) copy; plain push is refused without losing anything; sync joins.
    b.jules_ok(["log", "append", "mail", "--kind", "t.y", "--actor", "bob"]);
    assert_eq!(shown(&b, "mail").len(), 2);
    b.jules_ok(["sync"]);
    a.git(["fetch", "-q"]);
    assert_eq!(shown(&a, "mail").len(), 2);
    // An append joins what was fetched, so the next plain push is a fast-forward for the log, and the
    // current branch is still pushed with the configured push refspecs.
    a.jules_ok(["log", "append", "mail", "--kind", "t.z", "--actor", "alice"]);
    a.write("x.txt", "x\n");
    a.commit_all("x");
    a.git(["push", "-q"]);
    assert_eq!(bare.rev("main"), a.rev("HEAD"));
    assert_eq!(bare.rev("refs/jules/mail"), a.rev("refs/jules/mail"));
    b.git(["fetch", "-q"]);
    assert_eq!(shown(&b, "mail").len(), 3);
}

/// SIGKILL lands inside an append: the writer is held (`src/kit/testhook.rs`) at its N-th append, after the
/// event's objects are written and before the ref moves, and killed there. The log must stay readable, every
/// append before the N-th must have landed and the N-th must not. Each kill provably lands inside an append
/// (a sleep before the kill, as this test once did, may land before the first write on a loaded machine).
#[test]
fn kill_dash_9_never_leaves_an_unreadable_log() {
    let r = Repo::new();
    r.jules_ok([
        "log", "append", "mail", "--kind", "t.seed", "--actor", "seed",
    ]);
    let trials = 60;
    let mut landed_inside = 0;
    // Events only ever accumulate: a kill loses the append it interrupted, never one that had landed.
    let mut landed = 1;
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..trials {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let nth = 1 + seed % 30;
        let marks = tempfile::tempdir().unwrap();
        let mut child = crate::harness::Guarded::spawn(
            r.jules_cmd([
                "log", "append", "mail", "--kind", "t.crash", "--actor", "victim", "--repeat",
                "100000",
            ])
            .env("JULES_TEST_PAUSE_AT", "append refs/jules/mail")
            .env("JULES_TEST_PAUSE_HIT", nth.to_string())
            .env("JULES_TEST_PAUSE_DIR", marks.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        );
        // Wait for the writer's mark (an event, bounded only to catch a hang), then kill it there.
        let started = std::time::Instant::now();
        while std::fs::read_dir(marks.path()).unwrap().count() == 0 {
            assert!(
                child.child.try_wait().unwrap().is_none(),
                "the writer ended before its append {nth}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the writer never reached append {nth} (a hang)"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill_group(); // SIGKILL
        landed_inside += 1;
        let lock = r.path().join(".git/refs/jules/mail.lock");
        assert!(
            !lock.exists(),
            "killed before the ref update, no lock is left"
        );
        let repo = open(r.path());
        let log = Log::open(&repo, "mail").unwrap();
        let report = log.fsck().unwrap();
        assert!(report.is_clean(), "fsck after kill: {:?}", report.invalid);
        assert_eq!(
            report.events,
            landed + nth as usize - 1,
            "the {} appends before the kill landed, the one it interrupted did not",
            nth - 1
        );
        landed = report.events;
    }
    assert_eq!(landed_inside, trials, "every kill landed inside an append");
    eprintln!("kill -9 trials: {trials}, all inside an append");
    let out = r.git_output(["fsck", "--no-progress"]);
    assert!(out.status.success(), "git fsck: {}", stderr(&out));
    // A lock left behind by a killed writer is named at once (not retried for a minute), like git does.
    let lock = r.path().join(".git/refs/jules/mail.lock");
    std::fs::write(&lock, b"").unwrap();
    let touched = std::process::Command::new("touch")
        .args(["-d", "1 minute ago"])
        .arg(&lock)
        .status()
        .unwrap();
    assert!(touched.success());
    // How fast it fails is bench/latency.sh's (stale lock); here a bound that only catches a hang.
    let out = crate::harness::output_within(
        &mut r.jules_cmd([
            "log", "append", "mail", "--kind", "t.locked", "--actor", "victim",
        ]),
        Duration::from_secs(300),
    );
    // A lock left behind is for the user to clear (the message says how): exit 2, like git's own.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("mail.lock") && stderr(&out).contains("killed"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&lock).unwrap();
    // And the log still takes appends after all that.
    r.jules_ok([
        "log", "append", "mail", "--kind", "t.after", "--actor", "survivor",
    ]);
}

#[test]
fn garbage_on_the_ref_is_named_by_fsck_and_skipped_by_readers() {
    let r = Repo::new();
    r.jules_ok([
        "log", "append", "mail", "--kind", "t.ok", "--actor", "a", "--repeat", "2",
    ]);
    let tip = r.rev("refs/jules/mail").unwrap();
    let empty = r.git(["hash-object", "-t", "tree", "-w", "--stdin"]);
    let garbage = |msg: &str, parent: &str| -> String {
        let out = with_stdin(
            &mut r.git_cmd(["commit-tree", &empty, "-p", parent]),
            msg.as_bytes(),
        );
        stdout(&out).trim().to_owned()
    };
    let g1 = garbage("hello, this is not an event\n", &tip);
    let g2 = garbage(
        "jules-event t.x 000000000000\n\n{\"v\":1,\"kind\":\"t.x\"\n\nJules-Lamport: 9\nJules-Event-Id: 00\n",
        &g1,
    );
    r.git(["update-ref", "refs/jules/mail", &g2, &tip]);

    let out = r.jules(["log", "fsck", "mail"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "fsck must fail: {}",
        stdout(&out)
    );
    let text = stdout(&out);
    assert!(text.contains(&g1) && text.contains(&g2), "{text}");
    assert!(text.contains("not an event commit"), "{text}");
    assert!(text.contains("id mismatch"), "{text}");

    let out = r.jules(["log", "show", "mail"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).lines().count(), 2);
    assert!(stderr(&out).contains("skipping commit"), "{}", stderr(&out));
    // Appends continue on top with a clock above everything valid.
    r.jules_ok(["log", "append", "mail", "--kind", "t.next", "--actor", "a"]);
    let events = shown(&r, "mail");
    assert_eq!(events.len(), 3);
    let json = json_items(&r.jules_ok(["log", "show", "mail", "--json"]));
    assert_eq!(json[2]["lamport"], 3);
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    let r = Repo::new();
    let out = r.jules(["log", "append", "mail", "--kind", "t", "--actor", "../evil"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid actor name"),
        "{}",
        stderr(&out)
    );
    let out = r.jules(["log", "append", "../mail", "--kind", "t", "--actor", "a"]);
    assert_eq!(out.status.code(), Some(2));
    let out = r.jules([
        "log", "append", "mail", "--kind", "t", "--actor", "a", "--data", "{nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let big = format!("{{\"x\":\"{}\"}}\n", "a".repeat(300 * 1024));
    let out = with_stdin(
        &mut r.jules_cmd([
            "log", "append", "mail", "--kind", "t", "--actor", "a", "--batch",
        ]),
        big.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("over the limit"), "{}", stderr(&out));
    assert!(r.rev("refs/jules/mail").is_none(), "nothing may be written");
}

#[test]
fn attachments_ride_as_blobs_in_the_event_commit() {
    let r = Repo::new();
    r.write("fix.patch", "diff --git a/x b/x\n");
    r.jules_ok([
        "log",
        "append",
        "mail",
        "--kind",
        "t.att",
        "--actor",
        "a",
        "--file",
        "fix.patch=fix.patch",
    ]);
    assert_eq!(
        r.git(["show", "refs/jules/mail:payload/fix.patch"]),
        "diff --git a/x b/x"
    );
    let out = r.jules([
        "log",
        "append",
        "mail",
        "--kind",
        "t",
        "--actor",
        "a",
        "--file",
        "../x=fix.patch",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn events_are_named_by_unique_prefixes_and_ambiguity_is_an_error() {
    let r = Repo::new();
    // 1500 random ids among 65536 four-digit prefixes: about 17 pairs share one, and the chance that none
    // does is below 1e-7, so the ambiguity is checked at every run.
    r.jules_ok([
        "log", "append", "mail", "--kind", "t.p", "--actor", "a", "--repeat", "1500",
    ]);
    let ids: Vec<String> = shown(&r, "mail").into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(ids.len(), 1500);
    let out = r.jules_ok(["log", "get", "mail", &ids[5][..10], "--json"]);
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["id"], ids[5]);
    let mut sorted = ids.clone();
    sorted.sort();
    let prefix = sorted
        .windows(2)
        .find(|w| w[0][..4] == w[1][..4])
        .map(|w| w[0][..4].to_owned())
        .expect("1500 ids share a 4-digit prefix");
    let out = r.jules(["log", "get", "mail", &prefix]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ambiguous"), "{}", stderr(&out));
    let out = r.jules(["log", "get", "mail", &ids[0][..2]]);
    assert_eq!(out.status.code(), Some(2));
    let missing = if ids.iter().any(|i| i.starts_with("ffff0")) {
        "eeee0"
    } else {
        "ffff0"
    };
    let out = r.jules(["log", "get", "mail", missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not found"), "{}", stderr(&out));
}

#[test]
fn concurrent_syncs_race_on_the_remote_and_still_converge() {
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let clones: Vec<Repo> = (0..4).map(|_| origin.clone_of(bare.path())).collect();
    for (i, c) in clones.iter().enumerate() {
        c.jules_ok([
            "log",
            "append",
            "mail",
            "--kind",
            "t.race",
            "--actor",
            &format!("c{i}"),
            "--repeat",
            "5",
        ]);
    }
    // All four push at the same moment (the remote holds each push until all four arrived): three leases
    // go stale, and those syncs take another round or publish a writer ref; nobody fails.
    let held = crate::harness::hold_pushes_until(bare.path(), clones.len());
    let children: Vec<_> = clones
        .iter()
        .map(|c| {
            crate::harness::Guarded::spawn(
                c.jules_cmd(["sync", "--json"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped()),
            )
        })
        .collect();
    let mut stale = 0;
    for child in children {
        let out = child.wait_output(Duration::from_secs(600));
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let repeated = doc["rounds"].as_u64().unwrap() > 1
            || doc["refs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["published"] == "writer");
        stale += usize::from(repeated);
    }
    std::fs::remove_file(bare.path().join("hooks/pre-receive")).unwrap();
    assert!(
        crate::harness::pushes_held(&held) >= clones.len(),
        "the syncs did not meet at the remote"
    );
    assert!(
        stale >= clones.len() - 1,
        "only {stale} of {} racing syncs found their lease stale",
        clones.len()
    );
    for c in &clones {
        c.jules_ok(["sync"]);
    }
    for c in &clones {
        c.jules_ok(["sync"]);
    }
    let views: Vec<_> = clones.iter().map(|c| shown(c, "mail")).collect();
    assert_eq!(views[0].len(), 20);
    assert!(views.iter().all(|v| *v == views[0]));
}

// ---- library-level -------------------------------------------------------------------------

fn event(actor: &str, n: u64) -> NewEvent {
    NewEvent::new(Event::new("t.lib", actor, serde_json::json!({ "n": n })))
}

#[test]
fn order_is_the_same_whatever_the_merge_order() {
    // Three divergent branches of one log, joined in two different orders on two replicas.
    let r = Repo::new();
    let repo = open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    log.append(event("root", 0)).unwrap();
    let root = log.local_tip().unwrap().unwrap();
    let mut tips = Vec::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let branch = Log::open(&repo, &format!("t/{name}")).unwrap();
        r.git(["update-ref", branch.name(), &root.to_string()]);
        for n in 0..(i as u64 + 2) {
            branch.append(event(name, n)).unwrap();
        }
        tips.push(branch.local_tip().unwrap().unwrap());
    }
    let ab = log.join(tips[0], tips[1]).unwrap().tip();
    let abc = log.join(ab, tips[2]).unwrap().tip();
    let cb = log.join(tips[2], tips[1]).unwrap().tip();
    let cba = log.join(cb, tips[0]).unwrap().tip();
    assert_ne!(abc, cba, "different DAG shapes");
    let one = log.scan(&[abc], &[], false).unwrap().into_ordered().0;
    let two = log.scan(&[cba], &[], false).unwrap().into_ordered().0;
    assert_eq!(one.len(), 1 + 2 + 3 + 4);
    let ids =
        |v: &[git_jules::store::eventlog::LoggedEvent]| v.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(&one), ids(&two));
    // Causality: within each branch, n increases along the order, and the root comes first.
    assert_eq!(one[0].event.actor, "root");
    for name in ["a", "b", "c"] {
        let ns: Vec<u64> = one
            .iter()
            .filter(|e| e.event.actor == name)
            .map(|e| e.event.data["n"].as_u64().unwrap())
            .collect();
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{name}: {ns:?}");
    }
    // Appending after a join continues above every clock.
    r.git(["update-ref", log.name(), &abc.to_string()]);
    let next = log.append(event("after", 0)).unwrap();
    assert!(next.lamport > one.iter().map(|e| e.lamport).max().unwrap());
}

#[test]
fn the_same_event_appended_twice_counts_once() {
    let r = Repo::new();
    let repo = open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    let mut ev = Event::new("t.import", "importer", serde_json::json!({"k": 1}));
    ev.nonce = None;
    ev.time = "2026-01-28T15:30:00.000Z".into();
    let a = log.append(NewEvent::new(ev.clone())).unwrap();
    let b = log.append(NewEvent::new(ev)).unwrap();
    assert_eq!(a.id, b.id);
    let (events, _) = log.read_all().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].lamport, a.lamport, "first placement wins");
    assert_eq!(log.fsck().unwrap().duplicates, 1);
}

#[test]
fn projection_cache_is_warm_incremental_or_rebuilt_and_never_wrong() {
    let r = Repo::new();
    let repo = open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    log.append_batch((0..10).map(|n| event("a", n)).collect())
        .unwrap();
    let first = log.project::<LogStats>().unwrap();
    assert!(matches!(first.refresh, Refresh::Rebuilt { commits: 10 }));
    assert_eq!(first.view.events, 10);
    let warm = log.project::<LogStats>().unwrap();
    assert_eq!(warm.refresh, Refresh::Warm);
    assert_eq!(warm.view, first.view);

    log.append_batch((10..13).map(|n| event("b", n)).collect())
        .unwrap();
    let inc = log.project::<LogStats>().unwrap();
    assert_eq!(
        inc.refresh,
        Refresh::Incremental { commits: 3 },
        "only the new commits are read"
    );
    assert_eq!(inc.view.events, 13);

    // Rewritten ref (not a descendant): rebuilt, and the answer matches a fresh fold.
    let old = log.local_tip().unwrap().unwrap();
    r.git(["update-ref", log.name(), &format!("{old}~5")]);
    let rebuilt = log.project::<LogStats>().unwrap();
    assert!(matches!(rebuilt.refresh, Refresh::Rebuilt { .. }));
    assert_eq!(rebuilt.view.events, 8);

    // A corrupt cache is rebuilt, never trusted.
    let dir = log.cache_dir("stats");
    std::fs::write(dir.join("stats.json"), b"{garbage").unwrap();
    let fixed = log.project::<LogStats>().unwrap();
    assert!(matches!(fixed.refresh, Refresh::Rebuilt { .. }));
    assert_eq!(fixed.view.events, 8);
    std::fs::write(dir.join("ids.bin"), b"short").unwrap();
    log.append(event("c", 0)).unwrap();
    let after = log.project::<LogStats>().unwrap();
    assert!(matches!(after.refresh, Refresh::Rebuilt { .. }));
    assert_eq!(after.view.events, 9);

    // Deleting the cache changes no answer.
    std::fs::remove_dir_all(repo.common_dir().join("jules")).unwrap();
    assert_eq!(log.project::<LogStats>().unwrap().view, after.view);
}

#[test]
fn a_merge_bringing_older_events_refolds_in_order() {
    let r = Repo::new();
    let repo = open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    log.append(event("root", 0)).unwrap();
    let root = log.local_tip().unwrap().unwrap();
    // A side branch with low clocks, then many local events with higher clocks.
    let side = Log::open(&repo, "t/side").unwrap();
    r.git(["update-ref", side.name(), &root.to_string()]);
    side.append(event("side", 0)).unwrap();
    log.append_batch((0..5).map(|n| event("main", n)).collect())
        .unwrap();
    let before = log.project::<LogStats>().unwrap();
    assert_eq!(before.view.events, 6);
    let joined = log
        .join(
            log.local_tip().unwrap().unwrap(),
            side.local_tip().unwrap().unwrap(),
        )
        .unwrap()
        .tip();
    r.git(["update-ref", log.name(), &joined.to_string()]);
    let after = log.project::<LogStats>().unwrap();
    assert!(
        matches!(after.refresh, Refresh::Rebuilt { .. }),
        "{:?}",
        after.refresh
    );
    assert_eq!(after.view.events, 7);
    // In order: the side event (Lamport 2) among the first, not folded on at the end; the fold's last
    // event is still main's last (Lamport 6), its first the root.
    assert_eq!(after.view.last, before.view.last);
    assert_eq!(after.view.first, before.view.first);
    assert_eq!(after.view.max_lamport, 6);
    let events = log.read_all().unwrap().0;
    let keys: Vec<_> = events.iter().map(|e| e.key()).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    let actors: Vec<(&str, u64)> = events
        .iter()
        .map(|e| (e.event.actor.as_str(), e.lamport))
        .collect();
    let side_at = actors.iter().position(|a| a.0 == "side").unwrap();
    assert!(side_at <= 2 && actors[side_at].1 == 2, "{actors:?}");
}

#[test]
fn a_projection_waits_for_another_holder_of_its_cache_lock() {
    // Refreshing a cache rewrites several files; two processes doing it at once could pair one's
    // meta.json with the other's (older) view, which a later warm read would trust.
    let r = Repo::new();
    let repo = open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    log.append_batch((0..5).map(|n| event("a", n)).collect())
        .unwrap();
    let cache = log.cache_dir("stats");
    assert!(!cache.exists(), "appends write no projection cache");
    let held = log.lock_cache("stats");
    assert!(
        cache.with_extension("lock").exists(),
        "the test holds the lock"
    );
    let path = r.path().to_owned();
    let reader = std::thread::spawn(move || {
        let repo = open(&path);
        let log = Log::open(&repo, "mail").unwrap();
        log.project::<LogStats>().unwrap().view.events
    });
    // The lock stays held until the reader answers. A reader that waits for it gives up after a while
    // (CACHE_LOCK_WAIT) and answers from the log without touching the cache; one that did not wait would
    // have written the cache under our lock. No clock decides the outcome: the test waits for the answer.
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !reader.is_finished() {
        assert!(std::time::Instant::now() < deadline, "the reader hangs");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(reader.join().unwrap(), 5);
    assert!(
        !cache.exists(),
        "the reader wrote the cache while another held its lock"
    );
    drop(held);
    assert!(
        !log.cache_dir("stats").with_extension("lock").exists(),
        "released on drop"
    );
    let stats = log.project::<LogStats>().unwrap();
    assert_eq!(stats.view.events, 5);
    assert!(cache.exists(), "with the lock free the cache is written");
}

/// Appends write small loose objects with their own compressor (src/store/loose.rs) and keep reflogs where git
/// keeps them: none for a log (its history is its record), one for a branch created by `series start`.
#[test]
fn appends_write_objects_git_accepts_and_no_reflog_for_logs() {
    let r = Repo::new();
    for i in 0..20 {
        r.jules_ok([
            "log",
            "append",
            "bench",
            "--kind",
            "t.x",
            "--actor",
            "a",
            "--data",
            &format!("{{\"i\":{i}}}"),
        ]);
    }
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "a",
        "--to",
        "b",
        "--subject",
        "s",
        "--body",
        "x",
    ]);
    assert_eq!(r.git(["rev-list", "--count", "refs/jules/bench"]), "20");
    r.git(["fsck", "--strict", "--no-dangling"]);
    assert!(!r.path().join(".git/logs/refs/jules/bench").exists());
    assert!(!r.path().join(".git/logs/refs/jules/mail").exists());
    r.jules_ok(["series", "start", "feat"]);
    assert!(r
        .path()
        .join(".git/logs/refs/heads/jules/staging/feat")
        .exists());
}
