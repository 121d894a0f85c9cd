//! `series finalize` and `series abort`: land the series or give it up, and return to the base.

use serde_json::Value;

use crate::harness::{stderr, Repo};
use crate::series::make_series;

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// HEAD, every ref, the index and the tracked files: what a refused finalize must leave alone.
fn state(r: &Repo) -> String {
    format!(
        "{}\n{}\n{:?}\n{}\n{}",
        r.git(["symbolic-ref", "-q", "HEAD"]),
        r.git(["for-each-ref", "--exclude=refs/notes/"]),
        std::fs::read(r.path().join(".git/index")).unwrap(),
        r.git(["status", "--porcelain", "--untracked-files=all"]),
        r.git(["config", "--get-regexp", "julesbase"]),
    )
}

fn no_series_left(r: &Repo) {
    assert!(r.rev("refs/heads/jules/staging/feat").is_none());
    assert!(
        r.git_output(["config", "branch.jules/staging/feat.julesBase"])
            .status
            .code()
            != Some(0)
    );
    assert_eq!(r.git(["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(r.git(["status", "--porcelain"]), "");
}

#[test]
fn finalize_fast_forwards_the_base_and_removes_the_series() {
    let r = Repo::new();
    let ids = make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")],
    );
    r.git(["config", "jules.verify.cmd", "test -f a.txt"]);
    let doc = json(&r.jules_ok(["--json", "series", "finalize", "--jobs", "1"]));
    assert_eq!(doc["fast_forward"], true);
    assert_eq!(doc["verified"], true);
    assert_eq!(doc["new_base"], ids[2].as_str());
    // The base has exactly the series' commits, in order.
    assert_eq!(
        r.git(["rev-list", "--reverse", "HEAD~3..main"]),
        ids.join("\n")
    );
    no_series_left(&r);
    assert_eq!(r.rev("refs/jules/backup/series/feat/1").unwrap(), ids[2]);
    assert!(r
        .git(["reflog", "-1", "main"])
        .contains("jules series finalize"));
    assert!(r
        .git(["reflog", "-1", "HEAD"])
        .contains("checkout: moving from jules/staging/feat to main"));
}

#[test]
fn finalize_refuses_when_verify_fails_and_changes_nothing() {
    let r = Repo::new();
    make_series(
        &r,
        "feat",
        &[("a.txt", "a\n"), ("BROKEN", "x\n"), ("c.txt", "c\n")],
    );
    let before = state(&r);
    let out = r.jules([
        "series",
        "finalize",
        "--cmd",
        "test ! -e BROKEN",
        "--jobs",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(state(&r), before);
    // Without a command and without --no-verify: refused up front.
    let out = r.jules(["series", "finalize"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--no-verify"), "{}", stderr(&out));
    assert_eq!(state(&r), before);
}

#[test]
fn a_moved_base_that_conflicts_is_refused_and_one_that_does_not_is_rebased_onto() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "series a\n"), ("b.txt", "b\n")]);
    // main moves: a conflicting a.txt.
    r.git(["checkout", "-q", "main"]);
    r.write("a.txt", "main's a\n");
    let moved = r.commit_all("main adds a.txt too");
    r.git(["checkout", "-q", "jules/staging/feat"]);
    let before = state(&r);
    let out = r.jules(["series", "finalize", "--no-verify"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("no longer applies") && err.contains("a.txt"),
        "{err}"
    );
    assert!(err.contains("patch 1/2"), "{err}");
    assert_eq!(state(&r), before);
    let out = r.jules(["series", "finalize", "--no-verify", "--ff-only"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(state(&r), before);
    let out = r.jules(["series", "finalize", "--no-verify", "--merge"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(state(&r), before);

    // Resolve by rewriting main's side; the series now applies on the moved base and is replayed onto it.
    r.git(["checkout", "-q", "main"]);
    r.git(["rm", "-q", "a.txt"]);
    r.write("z.txt", "unrelated\n");
    let moved2 = r.commit_all("main: unrelated");
    r.git(["checkout", "-q", "jules/staging/feat"]);
    r.git(["config", "jules.verify.cmd", "test -f z.txt"]);
    let doc = json(&r.jules_ok(["--json", "series", "finalize"]));
    assert_eq!(doc["fast_forward"], false);
    assert_eq!(doc["old_base"], moved2.as_str());
    assert_eq!(
        r.git(["log", "--format=%s", &format!("{moved2}..main")]),
        "patch 2 touches b.txt\npatch 1 touches a.txt"
    );
    assert_eq!(r.git(["rev-parse", "main~2"]), moved2);
    assert_ne!(moved, moved2);
    assert_eq!(r.read("a.txt"), "series a\n");
    assert_eq!(r.read("z.txt"), "unrelated\n");
    no_series_left(&r);
}

#[test]
fn merge_mode_makes_a_merge_commit() {
    let r = Repo::new();
    let ids = make_series(&r, "feat", &[("a.txt", "a\n")]);
    let base = r.rev("main").unwrap();
    r.jules_ok(["series", "finalize", "--merge", "--no-verify"]);
    assert_eq!(
        r.git(["rev-list", "--parents", "-1", "main"]),
        format!("{} {base} {}", r.rev("main").unwrap(), ids[0])
    );
    assert!(r
        .git(["log", "-1", "--format=%s"])
        .contains("Merge series 'feat'"));
    no_series_left(&r);
}

#[test]
fn abort_returns_to_the_base_and_keeps_the_tip() {
    let r = Repo::new();
    let ids = make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    r.write("untracked.txt", "kept\n");
    // stdin is not a terminal here: --yes is required.
    let out = r.jules(["series", "abort"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    // Uncommitted work is never thrown away.
    r.write("a.txt", "edited\n");
    let before = state(&r);
    let out = r.jules(["series", "abort", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("a.txt"), "{}", stderr(&out));
    assert_eq!(state(&r), before);
    r.git(["checkout", "--", "a.txt"]);

    let doc = json(&r.jules_ok(["--json", "series", "abort", "--yes"]));
    assert_eq!(doc["checked_out"], "main");
    assert_eq!(r.rev("refs/jules/backup/series/feat/1").unwrap(), ids[1]);
    assert!(!r.path().join("a.txt").exists());
    assert_eq!(r.read("untracked.txt"), "kept\n");
    assert!(r.rev("refs/heads/jules/staging/feat").is_none());
    assert_eq!(r.git(["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(r.git(["status", "--porcelain"]), "?? untracked.txt");

    // Another series, aborted by name while HEAD is elsewhere: only its branch and config go.
    make_series(&r, "other", &[("o.txt", "o\n")]);
    r.git(["checkout", "-q", "main"]);
    r.jules_ok(["series", "abort", "other", "--yes"]);
    assert!(r.rev("refs/heads/jules/staging/other").is_none());
    assert!(r.rev("refs/jules/backup/series/other/1").is_some());
}

#[test]
fn finalize_refuses_to_move_a_base_checked_out_in_another_worktree() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    let wt = side.path().join("wt");
    r.git(["worktree", "add", "-q", "--detach", wt.to_str().unwrap()]);
    let wt_s = wt.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["-C", wt_s];
        all.extend_from_slice(args);
        r.jules(&all)
    };
    assert!(run(&["series", "start", "feat", "--base", "main"])
        .status
        .success());
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    assert!(run(&["series", "commit", "-s", "a", "-r", "r"])
        .status
        .success());
    // main is checked out in the main worktree: moving it from here would leave that one out of step.
    let out = run(&["series", "finalize", "--no-verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("checked out in the worktree"),
        "{}",
        stderr(&out)
    );
    assert!(r.rev("refs/heads/jules/staging/feat").is_some());
}
