//! `git jules verify` and the pre-push hook: bisect safety without touching the user's checkout.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{stderr, stdout, Guarded, Repo};
use crate::series::make_series;

/// The "build": fails when a tracked file has a line `BROKEN`, printing which.
const BUILD: &str = "if grep -rlx --exclude-dir=.git BROKEN .; then echo 'build failed: BROKEN marker' >&2; exit 1; fi";

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn results(report: &Value) -> Vec<String> {
    report["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["result"].as_str().unwrap().to_owned())
        .collect()
}

/// A command that appends the patch index to `counter` (outside the repository), then builds.
fn counting(counter: &Path) -> String {
    format!(
        "echo $JULES_VERIFY_INDEX >> '{}'; {BUILD}",
        counter.display()
    )
}

fn ran(counter: &Path) -> Vec<usize> {
    let mut v: Vec<usize> = std::fs::read_to_string(counter)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    v.sort();
    v
}

fn worktrees(r: &Repo) -> usize {
    r.git(["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

#[test]
fn the_seeds_case_names_patch_2_and_leaves_the_checkout_alone() {
    let r = Repo::new();
    make_series(
        &r,
        "feat",
        &[
            ("a.txt", "a\n"),
            ("b.txt", "BROKEN\n"),
            ("b.txt", "fixed\n"),
        ],
    );
    // Local state verify must not touch: an untracked file, an unstaged and a staged change.
    r.write("untracked.txt", "mine\n");
    r.write("a.txt", "edited, not staged\n");
    r.write("staged.txt", "staged\n");
    r.git(["add", "staged.txt"]);
    let status = r.git(["status", "--porcelain"]);
    let index = std::fs::read(r.path().join(".git/index")).unwrap();
    let head = r.rev("HEAD").unwrap();

    let scratch = tempfile::tempdir().unwrap();
    let out = r.jules([
        "--json",
        "verify",
        "--cmd",
        BUILD,
        "--worktree-dir",
        scratch.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&stdout(&out));
    assert_eq!(report["first_failure"], 2);
    assert_eq!(report["passed"], false);
    assert_eq!(report["commits"][1]["result"], "fail");
    assert_eq!(report["commits"][1]["exit_code"], 1);
    assert_eq!(report["commits"][0]["result"], "pass");
    let tail = report["commits"][1]["tail"].as_str().unwrap();
    assert!(
        tail.contains("build failed: BROKEN marker") && tail.contains("b.txt"),
        "{tail}"
    );
    assert_eq!(report["base"]["name"], "main");

    assert_eq!(r.git(["status", "--porcelain"]), status);
    assert_eq!(std::fs::read(r.path().join(".git/index")).unwrap(), index);
    assert_eq!(r.rev("HEAD").unwrap(), head);
    assert_eq!(
        r.git(["symbolic-ref", "HEAD"]),
        "refs/heads/jules/staging/feat"
    );
    assert_eq!(r.read("untracked.txt"), "mine\n");
    assert_eq!(r.read("a.txt"), "edited, not staged\n");
    assert_eq!(worktrees(&r), 1, "{}", r.git(["worktree", "list"]));
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);

    // The human and Markdown reports name patch 2 too.
    let human = r.jules(["verify", "--cmd", BUILD]);
    assert!(stdout(&human).contains("patch 2/3 "), "{}", stdout(&human));
    let md = stdout(&r.jules(["verify", "--cmd", BUILD, "--markdown"]));
    assert!(
        md.contains("| # | commit | summary | result | duration |"),
        "{md}"
    );
    assert!(
        md.contains("| 2 | `") && md.contains("**FAIL** (exit 1)"),
        "{md}"
    );
    assert!(
        md.contains("**Patch 2 of 3 fails**") && md.contains("build failed"),
        "{md}"
    );
}

#[test]
fn the_cache_runs_nothing_twice_and_only_changed_trees_again() {
    let r = Repo::new();
    let files = ["1.txt", "2.txt", "3.txt", "4.txt", "5.txt"];
    let patches: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x\n")).collect();
    make_series(&r, "feat", &patches);
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let cmd = counting(&counter);

    let first = json(&r.jules_ok(["--json", "verify", "--cmd", &cmd]));
    assert_eq!(
        (first["ran"].as_u64(), first["cached"].as_u64()),
        (Some(5), Some(0))
    );
    assert_eq!(ran(&counter), [1, 2, 3, 4, 5]);

    std::fs::remove_file(&counter).unwrap();
    let second = json(&r.jules_ok(["--json", "verify", "--cmd", &cmd]));
    assert_eq!(
        (second["ran"].as_u64(), second["cached"].as_u64()),
        (Some(0), Some(5))
    );
    assert!(second["commits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["cached"] == true));
    assert!(!counter.exists(), "a cached run executed the command");
    // The cache is a note on each tree, keyed by the command's SHA-256.
    let tree = r.git(["rev-parse", "HEAD^{tree}"]);
    let note = json(&r.git(["notes", "--ref=jules/verify", "show", &tree]));
    assert_eq!(note["version"], 1);
    let entry = note["results"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(entry["command"], cmd.as_str());
    assert_eq!(entry["result"], "pass");

    // Reroll patch 3 of 5: 1 and 2 keep their trees, 3..5 get new ones.
    let p2 = r.rev("HEAD~3").unwrap();
    let p4 = r.rev("HEAD~1").unwrap();
    let p5 = r.rev("HEAD").unwrap();
    r.git(["reset", "-q", "--hard", &p2]);
    r.write("3.txt", "changed\n");
    r.commit_all("patch 3, rerolled");
    r.git(["cherry-pick", &p4, &p5]);
    let third = json(&r.jules_ok(["--json", "verify", "--cmd", &cmd]));
    assert_eq!(ran(&counter), [3, 4, 5]);
    assert_eq!(
        (third["ran"].as_u64(), third["cached"].as_u64()),
        (Some(3), Some(2))
    );

    // --force ignores the cache.
    std::fs::remove_file(&counter).unwrap();
    r.jules_ok(["verify", "--cmd", &cmd, "--force"]);
    assert_eq!(ran(&counter), [1, 2, 3, 4, 5]);
}

#[test]
fn every_command_sees_exactly_its_commit_whatever_the_previous_one_did() {
    let r = Repo::new();
    make_series(
        &r,
        "feat",
        &[
            ("a.txt", "1\n"),
            ("b.txt", "2\n"),
            ("a.txt", "3\n"),
            ("c.txt", "4\n"),
        ],
    );
    // Each run checks that HEAD is its commit and the checkout is clean (tracked files, and the index
    // verify wrote for a fresh worktree), then dirties a tracked file and leaves an untracked one.
    let cmd = "test \"$(git rev-parse HEAD)\" = \"$JULES_VERIFY_COMMIT\" \
               && test -z \"$(git status --porcelain --untracked-files=no)\" \
               && git diff --quiet && echo scribble >> README && echo x > untracked-$JULES_VERIFY_INDEX";
    let report = json(&r.jules_ok(["--json", "verify", "--jobs", "1", "--cmd", cmd]));
    assert_eq!(results(&report), ["pass", "pass", "pass", "pass"]);
    let report = json(&r.jules_ok(["--json", "verify", "--jobs", "2", "--force", "--cmd", cmd]));
    assert_eq!(results(&report), ["pass", "pass", "pass", "pass"]);
    assert_eq!(r.read("README"), "hello\n");
}

/// Each commit leaves its marker in `dir`, then waits for the other commit's, giving up after `tries`
/// looks 50 ms apart: only two commits running at the same time both pass.
fn barrier(dir: &Path, tries: u32) -> String {
    format!(
        "m='{}'; touch \"$m/$JULES_VERIFY_INDEX\"; other=$((3 - JULES_VERIFY_INDEX)); n=0; \
         while [ ! -e \"$m/$other\" ]; do n=$((n + 1)); [ $n -gt {tries} ] && exit 1; sleep 0.05; done",
        dir.display()
    )
}

/// A bound on a wait that only catches a hang (about two minutes of 50 ms looks): a slow machine never
/// reaches it, so no result here depends on how fast the machine is.
const HANG_TRIES: u32 = 2400;

/// Wait for `ready`, panicking after a bound that only catches a hang.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not after two minutes");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until both verify commands wrote their pid line to `marks`.
fn wait_for_commands(marks: &Path) {
    wait_until("the commands start", || {
        let names: Vec<_> = std::fs::read_dir(marks).unwrap().collect();
        names.len() == 2
            && names.into_iter().all(|e| {
                std::fs::read_to_string(e.unwrap().path()).is_ok_and(|t| t.ends_with('\n'))
            })
    });
}

/// The pids that the verify commands wrote to `marks/started.N` (`echo $$ > …; exec sleep …`).
fn command_pids(marks: &Path) -> Vec<i32> {
    std::fs::read_dir(marks)
        .unwrap()
        .map(|e| {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            text.trim().parse().unwrap()
        })
        .collect()
}

/// Whether process `pid` is alive (a zombie has ended: only its exit status is left to collect).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn two_jobs_really_run_at_once() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let marks = tempfile::tempdir().unwrap();
    let report = json(&r.jules_ok([
        "--json",
        "verify",
        "--jobs",
        "2",
        "--cmd",
        &barrier(marks.path(), HANG_TRIES),
    ]));
    assert_eq!(results(&report), ["pass", "pass"]);
    assert_eq!(report["jobs"], 2);

    // The barrier can fail: one job runs commit 1 alone and it gives up. Its short wait is no threshold:
    // with one job the other marker never appears, however long it waits.
    let marks = tempfile::tempdir().unwrap();
    let out = r.jules([
        "--json",
        "verify",
        "--jobs",
        "1",
        "--cmd",
        &barrier(marks.path(), 10),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(results(&json(&stdout(&out))), ["fail", "skipped"]);
}

#[test]
fn the_first_failure_in_series_order_wins_over_the_first_to_finish() {
    let r = Repo::new();
    // Patch 2 fails only once patch 3 has failed (it waits for patch 3's marker, not for a clock), patch 4
    // would pass: patch 3 is the first to finish failing on any machine.
    make_series(
        &r,
        "feat",
        &[
            ("verdict", "pass\n"),
            ("verdict", "slow-fail\n"),
            ("verdict", "fast-fail\n"),
            ("verdict", "pass\n"),
        ],
    );
    let marks = tempfile::tempdir().unwrap();
    let cmd = format!(
        "m='{}/fast-failed'; case $(cat verdict) in pass) exit 0;; \
         slow-fail) n=0; until [ -e \"$m\" ]; do n=$((n + 1)); [ $n -gt {HANG_TRIES} ] && exit 1; sleep 0.05; done; exit 7;; \
         *) touch \"$m\"; exit 9;; esac",
        marks.path().display()
    );
    let cmd = cmd.as_str();
    let out = r.jules(["--json", "verify", "--jobs", "2", "--cmd", cmd]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&stdout(&out));
    assert_eq!(report["first_failure"], 2);
    assert_eq!(report["commits"][1]["exit_code"], 7);
    assert_eq!(results(&report), ["pass", "fail", "fail", "skipped"]);

    // --keep-going runs everything.
    let out = r.jules(["--json", "verify", "--keep-going", "--force", "--cmd", cmd]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&stdout(&out));
    assert_eq!(results(&report), ["pass", "fail", "fail", "pass"]);
    assert_eq!(report["first_failure"], 2);
}

#[test]
fn ctrl_c_stops_the_commands_removes_the_worktrees_and_exits_130() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let marks = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // Each command leaves its pid, then becomes a sleep far longer than any wait below.
    let cmd = format!(
        "echo $$ > '{}/started.'$JULES_VERIFY_INDEX; exec sleep 600",
        marks.path().display()
    );
    let mut child = Guarded::spawn(
        r.jules_cmd([
            "verify",
            "--jobs",
            "2",
            "--cmd",
            &cmd,
            "--worktree-dir",
            scratch.path().to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped()),
    );
    wait_for_commands(marks.path());
    let pids = command_pids(marks.path());
    assert!(pids.iter().all(|&pid| alive(pid)), "{pids:?}");
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut status = None;
    wait_until("verify exits after SIGINT", || {
        status = child.child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(130));
    // The commands were stopped, not left to finish their sleep (killed with verify's signal, so at most
    // a moment passes between verify's exit and theirs).
    wait_until("the commands die", || pids.iter().all(|&pid| !alive(pid)));
    assert_eq!(worktrees(&r), 1, "{}", r.git(["worktree", "list"]));
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    assert!(
        !r.path().join(".git/worktrees").exists()
            || std::fs::read_dir(r.path().join(".git/worktrees"))
                .unwrap()
                .count()
                == 0
    );
}

#[test]
fn worktrees_left_by_a_killed_run_are_removed_by_the_next_one() {
    let r = Repo::new();
    make_series(&r, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let marks = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let cmd = format!(
        "echo $$ > '{}/started.'$JULES_VERIFY_INDEX; exec sleep 600",
        marks.path().display()
    );
    let mut child = Guarded::spawn(
        r.jules_cmd([
            "verify",
            "--jobs",
            "2",
            "--cmd",
            &cmd,
            "--worktree-dir",
            scratch.path().to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null()),
    );
    wait_for_commands(marks.path());
    // The commands run in process groups of verify's own, out of the test's reach once verify is killed:
    // they are killed by pid when the test ends, on every path.
    let _commands = KillOnDrop(command_pids(marks.path()));
    child.child.kill().unwrap(); // SIGKILL to verify alone: no cleanup
    child.child.wait().unwrap();
    let list = r.git(["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees(&r), 3, "{list}");
    assert!(list.contains("locked git-jules verify (pid"), "{list}");
    // Even a run that needs no worktree (empty range) clears them.
    r.jules_ok(["verify", "--cmd", "true", "--base", "HEAD"]);
    assert_eq!(worktrees(&r), 1, "{}", r.git(["worktree", "list"]));
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}

#[test]
fn an_empty_range_says_so_and_a_missing_command_is_a_usage_error() {
    let r = Repo::new();
    let out = r.jules(["verify", "--cmd", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("nothing to verify: main..HEAD is empty"),
        "{err}"
    );
    assert!(err.contains("git jules series start NAME"), "{err}");
    let out = r.jules(["verify"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("jules.verify.cmd"),
        "{}",
        stderr(&out)
    );
    let out = r.jules(["--json", "verify", "--markdown", "--cmd", "true"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn results_verified_in_another_clone_arrive_with_fetch() {
    let origin = Repo::new();
    let remote = origin.bare_sibling();
    origin.git(["push", "-q", remote.path().to_str().unwrap(), "main"]);
    let a = origin.clone_of(remote.path());
    a.jules_ok(["init"]);
    make_series(&a, "feat", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    // The same command text in both clones, so the same cache key.
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let cmd = counting(&counter);
    a.git(["config", "jules.verify.cmd", &cmd]);
    a.jules_ok(["verify"]);
    assert_eq!(ran(&counter), [1, 2]);
    std::fs::remove_file(&counter).unwrap();
    a.git(["push", "-q", "origin", "jules/staging/feat"]);
    a.jules_ok(["sync"]); // carries refs/notes/jules/verify

    let b = origin.clone_of(remote.path());
    b.jules_ok(["init"]);
    b.git(["fetch", "-q", "origin"]);
    b.git([
        "checkout",
        "-q",
        "-b",
        "jules/staging/feat",
        "origin/jules/staging/feat",
    ]);
    b.git(["config", "jules.verify.cmd", &cmd]);
    let report = json(&b.jules_ok(["--json", "verify"]));
    assert_eq!(
        (report["ran"].as_u64(), report["cached"].as_u64()),
        (Some(0), Some(2))
    );
    assert!(
        !counter.exists(),
        "a result fetched from the remote was run again"
    );
    assert!(
        b.rev("refs/notes/jules/verify").is_none(),
        "reading must not copy notes"
    );
}

/// Install the hook in a clone of a bare remote whose main has one commit.
fn hooked_clone() -> (Repo, Repo) {
    let origin = Repo::new();
    let remote = origin.bare_sibling();
    origin.git(["push", "-q", remote.path().to_str().unwrap(), "main"]);
    let r = origin.clone_of(remote.path());
    let out = r.jules_ok(["--json", "hooks", "install"]);
    assert_eq!(json(&out)["action"], "installed");
    r.git(["config", "jules.verify.cmd", BUILD]);
    (remote, r)
}

#[test]
fn the_pre_push_hook_blocks_a_broken_series_and_lets_a_good_one_through() {
    let (remote, r) = hooked_clone();
    make_series(
        &r,
        "bad",
        &[("a.txt", "a\n"), ("b.txt", "BROKEN\n"), ("c.txt", "c\n")],
    );
    let push = r.git_output(["push", "origin", "jules/staging/bad"]);
    assert!(!push.status.success(), "the push went through");
    let err = stderr(&push);
    assert!(
        err.contains("patch 2/3") && err.contains("push refused"),
        "{err}"
    );
    assert!(remote.rev("refs/heads/jules/staging/bad").is_none());

    r.git(["checkout", "-q", "main"]);
    make_series(&r, "good", &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let push = r.git_output(["push", "origin", "jules/staging/good"]);
    assert!(push.status.success(), "{}", stderr(&push));
    assert_eq!(
        remote.rev("refs/heads/jules/staging/good"),
        r.rev("jules/staging/good")
    );

    let good_tip = r.rev("HEAD").unwrap();

    // Appending a broken patch to the pushed series: the new commit is checked and refused.
    r.write("d.txt", "BROKEN\n");
    r.jules_ok(["series", "commit", "-s", "break it", "-r", "test"]);
    let push = r.git_output(["push", "origin", "jules/staging/good"]);
    assert!(!push.status.success());
    assert!(stderr(&push).contains("patch 1/1"), "{}", stderr(&push));

    // Under the pre-commit framework the hook reads PRE_COMMIT_* instead of stdin.
    let hook = r.path().join(".git/hooks/pre-push");
    let bad = r.rev("jules/staging/bad").unwrap();
    for (tip, ok) in [(bad.as_str(), false), (good_tip.as_str(), true)] {
        let mut cmd = std::process::Command::new(&hook);
        r.env.apply(&mut cmd);
        let out = cmd
            .current_dir(r.path())
            .args(["origin", remote.path().to_str().unwrap()])
            .env(
                "PRE_COMMIT_FROM_REF",
                "0000000000000000000000000000000000000000",
            )
            .env("PRE_COMMIT_TO_REF", tip)
            .env("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/jules/staging/x")
            .env("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/jules/staging/x")
            .output()
            .unwrap();
        assert_eq!(out.status.success(), ok, "{tip}: {}", stderr(&out));
    }

    // Other branches are not verified by default; with jules.verify.prePush=all they are.
    r.git(["checkout", "-q", "-b", "topic"]);
    let push = r.git_output(["push", "origin", "topic"]);
    assert!(push.status.success(), "{}", stderr(&push));
    r.git(["config", "jules.verify.prePush", "all"]);
    let push = r.git_output(["push", "origin", "HEAD:refs/heads/topic2"]);
    assert!(
        !push.status.success(),
        "prePush=all let a broken branch through"
    );
    assert!(remote.rev("refs/heads/topic2").is_none());
}

#[test]
fn hooks_install_respects_core_hooks_path_and_never_clobbers_silently() {
    let r = Repo::new();
    r.git(["config", "core.hooksPath", "my-hooks"]);
    let out = json(&r.jules_ok(["--json", "hooks", "install"]));
    let path = r.path().join("my-hooks/pre-push");
    assert_eq!(Path::new(out["path"].as_str().unwrap()), path);
    assert!(!r.path().join(".git/hooks/pre-push").exists());
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o111, 0o111);
    assert_eq!(
        json(&r.jules_ok(["--json", "hooks", "install"]))["action"],
        "unchanged"
    );

    std::fs::write(&path, "#!/bin/sh\necho mine\n").unwrap();
    let out = r.jules(["hooks", "install"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    let out = json(&r.jules_ok(["--json", "hooks", "install", "--force"]));
    assert_eq!(out["action"], "replaced");
    assert_eq!(
        std::fs::read_to_string(r.path().join("my-hooks/pre-push.jules-backup")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r.jules_ok(["hooks", "show"])
    );
}

/// Processes SIGKILLed by pid when dropped.
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // Only while it is still the command's sleep: a pid that ended may have been reused.
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if !cmdline.starts_with(b"sleep\0") {
                continue;
            }
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// A sandbox with no git identity at all can still verify: the worktrees' reflogs need a committer, which gix
/// refuses to make up and git does (from the login name). Before the fallback this exited 4 with "reflog
/// messages need a committer which isn't set".
#[test]
fn a_machine_without_a_git_identity_can_verify() {
    let r = Repo::new();
    r.git(["checkout", "-qb", "topic"]);
    r.write("a.txt", "a\n");
    r.git(["add", "a.txt"]);
    r.git(["commit", "-qm", "add a"]);
    std::fs::write(
        r.env.home.path().join(".gitconfig"),
        "[init]\n\tdefaultBranch = main\n",
    )
    .unwrap();
    let out = r.jules([
        "--json",
        "verify",
        "--cmd",
        "test -f a.txt",
        "--base",
        "main",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(results(&json(&stdout(&out))), ["pass"]);
    assert_eq!(worktrees(&r), 1, "{}", r.git(["worktree", "list"]));
}

/// A `git` first on `PATH` that notes each `git checkout` in `counter`, then runs the real git: the `PATH`
/// to give verify, which moves its worktrees in process unless something unusual sends it to git.
fn counting_git(dir: &Path, counter: &Path) -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let script = dir.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" checkout \"*) echo checkout >> '{}';; esac\nexec '{real}' \"$@\"\n",
            counter.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap())
}

fn checkouts(counter: &Path) -> usize {
    std::fs::read_to_string(counter)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// `git jules --json verify ARGS` with `git checkout` counted; panics unless it exits 0.
fn verify_counting(r: &Repo, args: &[&str]) -> (Value, usize) {
    let bin = tempfile::tempdir().unwrap();
    let counter = bin.path().join("checkouts");
    let out = r
        .jules_cmd(["--json", "verify"].iter().chain(args))
        .env("PATH", counting_git(bin.path(), &counter))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    (json(&stdout(&out)), checkouts(&counter))
}

/// Commit everything in `r` (additions, changes, deletions, modes, symlinks) on the current branch.
fn commit_everything(r: &Repo, message: &str) {
    r.git(["add", "-A"]);
    r.git(["commit", "-qm", message]);
}

/// Worktrees move from commit to commit without `git checkout` (in process), and still end exactly at each
/// commit whatever the previous command did: a tracked file edited in place with the same size right away, one
/// appended to, one deleted, one made executable, untracked files that must stay; across commits a file's
/// content, exec bit and symlink target change, a file becomes a directory and back, a directory empties
/// (and goes). Before the in-process move, each of the three moves ran `git checkout`.
#[test]
fn worktrees_move_in_process_and_end_exactly_at_each_commit() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let r = Repo::new();
    r.write("same.txt", "1\n");
    commit_everything(&r, "same.txt");
    r.git(["checkout", "-qb", "topic"]);
    let p = r.path();
    let chmod = |f: &str, mode: u32| {
        std::fs::set_permissions(p.join(f), std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // 1: files, a plain script, a symlink.
    r.write("a.txt", "1\n");
    std::fs::create_dir(p.join("dir")).unwrap();
    r.write("dir/b.txt", "b\n");
    r.write("run.sh", "echo run\n");
    symlink("a.txt", p.join("link")).unwrap();
    r.write("x", "x is a file\n");
    commit_everything(&r, "one");
    // 2: content, exec bit, symlink target.
    r.write("a.txt", "2\n");
    chmod("run.sh", 0o755);
    std::fs::remove_file(p.join("link")).unwrap();
    symlink("dir/b.txt", p.join("link")).unwrap();
    commit_everything(&r, "two");
    // 3: a file becomes a directory, a directory empties, a symlink becomes a file, exec bit off.
    std::fs::remove_file(p.join("x")).unwrap();
    std::fs::create_dir(p.join("x")).unwrap();
    r.write("x/y.txt", "y\n");
    std::fs::remove_dir_all(p.join("dir")).unwrap();
    std::fs::remove_file(p.join("link")).unwrap();
    r.write("link", "a file now\n");
    chmod("run.sh", 0o644);
    commit_everything(&r, "three");
    // 4: the directory becomes a file again, a new directory.
    std::fs::remove_dir_all(p.join("x")).unwrap();
    r.write("x", "x is a file again\n");
    r.write("new/deep/c.txt", "c\n");
    commit_everything(&r, "four");

    // Checked against the commit with every file's content re-read (`--really-refresh` ignores stat data),
    // then scribbled on.
    let cmd = "set -e; test \"$(git rev-parse HEAD)\" = \"$JULES_VERIFY_COMMIT\"; \
               git update-index -q --really-refresh; git diff --quiet HEAD; \
               test -z \"$(git status --porcelain --untracked-files=no)\"; \
               test -z \"$(git status --porcelain | grep -v '^?? junk-')\"; \
               test \"$(ls junk-* 2>/dev/null | wc -l)\" -eq $((JULES_VERIFY_INDEX - 1)); \
               case $JULES_VERIFY_INDEX in 3) test ! -e dir; test -d x;; 4) test -f x;; esac; \
               printf '9\\n' > same.txt; echo scribble >> a.txt; rm README; chmod +x same.txt; \
               echo u > junk-$JULES_VERIFY_INDEX";
    let (report, moved_by_git) =
        verify_counting(&r, &["--base", "main", "--jobs", "1", "--cmd", cmd]);
    assert_eq!(results(&report), ["pass", "pass", "pass", "pass"]);
    assert_eq!(moved_by_git, 0, "every move in process");
    // Two jobs, another order of moves.
    let cmd2 = cmd.replace(
        "test \"$(ls junk-* 2>/dev/null | wc -l)\" -eq $((JULES_VERIFY_INDEX - 1)); ",
        "",
    );
    let (report, moved_by_git) = verify_counting(
        &r,
        &["--base", "main", "--jobs", "2", "--force", "--cmd", &cmd2],
    );
    assert_eq!(results(&report), ["pass", "pass", "pass", "pass"]);
    assert_eq!(moved_by_git, 0);
    assert_eq!(
        r.read("same.txt"),
        "1\n",
        "the user's checkout is untouched"
    );
}

/// Files written in process go through the attributes' conversions (`eol=crlf` here), as `git checkout`
/// writes them; a commit that changes a `.gitattributes` is moved to by git (the one `git checkout`), which
/// rewrites with the new rules; the next move is in process again.
#[test]
fn attributes_convert_files_in_process_and_a_changed_gitattributes_goes_to_git() {
    let r = Repo::new();
    r.write(".gitattributes", "*.txt eol=crlf\n");
    commit_everything(&r, "attributes");
    r.git(["checkout", "-qb", "topic"]);
    r.write("a.txt", "a\nb\n");
    commit_everything(&r, "one");
    r.write("a.txt", "a\nc\n");
    commit_everything(&r, "two");
    r.write(".gitattributes", "*.txt -text\n");
    r.write("a.txt", "x\ny\n");
    commit_everything(&r, "three");
    r.write("a.txt", "x\nz\n");
    commit_everything(&r, "four");
    // CRLF in the worktree under eol=crlf (1, 2), LF once the file is no longer text (3, 4).
    let cmd =
        "set -e; if [ $JULES_VERIFY_INDEX -le 2 ]; then ! tr -d '\\r' < a.txt | cmp -s - a.txt; \
               else tr -d '\\r' < a.txt | cmp -s - a.txt; fi; \
               git update-index -q --really-refresh; git diff --quiet HEAD";
    let (report, moved_by_git) =
        verify_counting(&r, &["--base", "main", "--jobs", "1", "--cmd", cmd]);
    assert_eq!(results(&report), ["pass", "pass", "pass", "pass"]);
    assert_eq!(moved_by_git, 1, "only the move to the new .gitattributes");
}

/// A driver filter (a user program) is git's to run: every move goes through `git checkout`, whose smudge
/// the command sees.
#[test]
fn a_driver_filter_sends_every_move_to_git() {
    let r = Repo::new();
    r.git(["config", "filter.up.smudge", "tr a-z A-Z"]);
    r.git(["config", "filter.up.clean", "tr A-Z a-z"]);
    r.write(".gitattributes", "*.up filter=up\n");
    commit_everything(&r, "attributes");
    r.git(["checkout", "-qb", "topic"]);
    for (i, text) in ["one\n", "two\n", "three\n"].iter().enumerate() {
        r.write("a.up", text);
        commit_everything(&r, &format!("c{i}"));
    }
    let cmd = "set -e; case $JULES_VERIFY_INDEX in 1) grep -qx ONE a.up;; 2) grep -qx TWO a.up;; \
               3) grep -qx THREE a.up;; esac";
    let (report, moved_by_git) =
        verify_counting(&r, &["--base", "main", "--jobs", "1", "--cmd", cmd]);
    assert_eq!(results(&report), ["pass", "pass", "pass"]);
    assert_eq!(moved_by_git, 2);
}

/// A command that moves a tracked directory away and leaves a symlink to it in its place: every file below
/// still lstats as it was (the symlink is followed). What the next commit's worktree is then is git's call
/// (`git checkout -f` 2.47 leaves the symlink when the directory's files do not change), so every move goes
/// to git while the symlink is there.
#[test]
fn a_tracked_directory_replaced_by_a_symlink_goes_to_git() {
    let r = Repo::new();
    r.git(["checkout", "-qb", "topic"]);
    for (i, text) in ["1\n", "2\n", "3\n"].iter().enumerate() {
        r.write("dir/b.txt", "b\n");
        r.write("a.txt", text);
        commit_everything(&r, &format!("c{i}"));
    }
    let cmd = "set -e; test \"$(cat a.txt)\" = $JULES_VERIFY_INDEX; \
               if [ $JULES_VERIFY_INDEX = 1 ]; then mv dir moved; ln -s moved dir; fi";
    let (report, moved_by_git) =
        verify_counting(&r, &["--base", "main", "--jobs", "1", "--cmd", cmd]);
    assert_eq!(results(&report), ["pass", "pass", "pass"]);
    assert_eq!(moved_by_git, 2);
}

/// A crafted tree that names `..` must not be written outside the worktree (here a symlink `../../evil`, in the
/// scratch directory): the in-process move refuses the path and leaves the move to git, which refuses to
/// check it out (as `git checkout` always did here).
#[test]
fn a_tree_naming_dot_dot_is_never_written_outside_the_worktree() {
    use crate::harness::with_stdin;
    let r = Repo::new();
    r.git(["checkout", "-qb", "topic"]);
    r.write("a.txt", "1\n");
    commit_everything(&r, "one");
    let blob = r.git(["hash-object", "-w", "README"]);
    let blob = blob.trim();
    let evil = with_stdin(
        &mut r.git_cmd(["mktree"]),
        format!("120000 blob {blob}\tevil\n").as_bytes(),
    );
    let evil = String::from_utf8(evil.stdout).unwrap().trim().to_owned();
    let raw = |hex: &str| -> Vec<u8> {
        (0..20)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    };
    let literally = |tree: &[u8]| {
        let out = with_stdin(
            &mut r.git_cmd(["hash-object", "-t", "tree", "--literally", "-w", "--stdin"]),
            tree,
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    // `../../evil`, a symlink (no filter sees its path): two levels up from the worktree is the scratch
    // directory given below.
    let mut mid = b"40000 ..\0".to_vec();
    mid.extend(raw(&evil));
    let mid = literally(&mid);
    let mut tree = b"40000 ..\0".to_vec();
    tree.extend(raw(&mid));
    tree.extend(b"100644 README\0");
    tree.extend(raw(blob));
    let tree = literally(&tree);
    let commit = r.git(["commit-tree", &tree, "-p", "HEAD", "-m", "evil"]);
    r.git(["update-ref", "refs/heads/topic", commit.trim()]);
    let bin = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let counter = bin.path().join("checkouts");
    let out = r
        .jules_cmd([
            "verify", "--base", "main", "--jobs", "1", "--cmd", "true", "topic",
        ])
        .arg("--worktree-dir")
        .arg(scratch.path())
        .env("PATH", counting_git(bin.path(), &counter))
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(checkouts(&counter), 1, "the move went to git");
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "written outside the worktree: {left:?}");
}
