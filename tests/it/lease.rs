//! `git jules lease`: path leases on `refs/jules/lease`; exit codes and JSON, a fake clock for expiry
//! (`GIT_COMMITTER_DATE` through `Repo::jules_at`), the mails that keep a lease from lapsing silently, one
//! holder after two offline clones sync, and the pre-commit hook through a real `git commit`. The race of
//! `acquire --sync` through smart HTTP is in `remotes.rs`, next to its server.

use std::process::Output;

use crate::harness::{stderr, stdout, Repo};

const T0: &str = "2030-01-01T10:00:00Z";

/// Run `git-jules ARGS --persona PERSONA` at `date`. The output must be used: a discarded result hid a
/// failed acquire, and the test then passed whatever the setup did (issue 41, finding 10).
#[must_use]
fn at(r: &Repo, date: &str, persona: &str, args: &[&str]) -> Output {
    let mut all = vec!["--persona", persona];
    all.splice(0..0, args.iter().copied());
    r.jules_at(date, &all)
}

/// `at` that must succeed: a setup step whose failure would make the rest of the test meaningless.
fn ok_at(r: &Repo, date: &str, persona: &str, args: &[&str]) -> Output {
    let o = at(r, date, persona, args);
    assert!(o.status.success(), "{args:?} as {persona}: {}", stderr(&o));
    o
}

fn json(o: &Output) -> serde_json::Value {
    let s = stdout(o);
    let v: serde_json::Value =
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}): {s} / {}", stderr(o)));
    assert_eq!(v["version"], 1, "{s}");
    v
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Run `git-jules ARGS` as `persona` at T0; it must succeed.
fn ok_as(r: &Repo, persona: &str, args: &[&str]) {
    let o = r
        .jules_cmd(args)
        .env("JULES_PERSONA", persona)
        .env("GIT_COMMITTER_DATE", T0)
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

/// The first path of every live lease at T0.
fn held_paths(r: &Repo) -> Vec<String> {
    json(&r.jules_at(T0, ["--json", "lease", "list"]))["leases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["paths"][0].as_str().unwrap().to_owned())
        .collect()
}

fn inbox(r: &Repo, persona: &str) -> String {
    r.jules_ok(["mail", "inbox", "--persona", persona])
}

#[test]
fn acquire_conflict_list_check_renew_release_with_exit_codes_and_json() {
    let r = Repo::new();
    let o = at(
        &r,
        T0,
        "ann",
        &[
            "--json",
            "lease",
            "acquire",
            "src/lease/",
            "--ttl",
            "1h",
            "--reason",
            "leases",
        ],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["held"], true);
    assert_eq!(v["final"], false);
    let id = v["lease"]["id"].as_str().unwrap().to_owned();
    assert_eq!(v["lease"]["expires_at"], "2030-01-01T11:00:00Z");

    // An overlapping exclusive lease of another persona: exit 3, naming holder, paths, reason and expiry.
    let o = at(&r, T0, "bob", &["lease", "acquire", "src/**/*.rs"]);
    assert_eq!(code(&o), Some(3));
    let out = stdout(&o);
    for want in [
        "ann",
        "src/lease/",
        "leases",
        "2030-01-01T11:00:00Z",
        &id[..12],
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    // Shared against exclusive conflicts too; a disjoint path does not.
    assert_eq!(
        code(&at(
            &r,
            T0,
            "bob",
            &["lease", "acquire", "--shared", "src/lease/x.rs"]
        )),
        Some(3)
    );
    assert_eq!(
        code(&at(&r, T0, "bob", &["lease", "acquire", "docs/"])),
        Some(0)
    );

    // list shows time left; --persona and --path filter.
    let o = r.jules_at(
        "2030-01-01T10:30:00Z",
        ["--json", "lease", "list", "--persona", "ann"],
    );
    let v = json(&o);
    assert_eq!(v["leases"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["leases"][0]["expires_in"], 1800);
    assert_eq!(v["leases"][0]["live"], true);
    let o = r.jules_at(T0, ["--json", "lease", "list", "--path", "docs/a.md"]);
    assert_eq!(json(&o)["leases"][0]["persona"], "bob");

    // check: ann's paths are a conflict for bob (exit 1), not for ann.
    let o = at(
        &r,
        T0,
        "bob",
        &["--json", "lease", "check", "src/lease/mod.rs", "README"],
    );
    assert_eq!(code(&o), Some(1));
    let v = json(&o);
    assert_eq!(v["conflicts"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["conflicts"][0]["path"], "src/lease/mod.rs");
    assert_eq!(v["conflicts"][0]["lease"]["persona"], "ann");
    assert_eq!(
        code(&at(&r, T0, "ann", &["lease", "check", "src/lease/mod.rs"])),
        Some(0)
    );

    // Only the holder renews; bob cannot release it without --force --reason.
    assert_eq!(
        code(&at(&r, T0, "bob", &["lease", "renew", &id[..8]])),
        Some(3)
    );
    assert_eq!(
        code(&at(&r, T0, "bob", &["lease", "release", &id[..8]])),
        Some(3)
    );
    assert_eq!(
        code(&at(
            &r,
            T0,
            "bob",
            &["lease", "release", &id[..8], "--force"]
        )),
        Some(2)
    );
    let o = at(&r, T0, "ann", &["lease", "release", &id[..8]]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(
        code(&at(&r, T0, "bob", &["lease", "acquire", "src/**/*.rs"])),
        Some(0)
    );

    // Unknown ids and bad durations are bad input.
    assert_eq!(
        code(&at(&r, T0, "ann", &["lease", "renew", "ffffffff"])),
        Some(2)
    );
    assert_eq!(
        code(&at(
            &r,
            T0,
            "ann",
            &["lease", "acquire", "x", "--ttl", "soon"]
        )),
        Some(2)
    );
}

#[test]
fn malformed_patterns_are_refused_and_nothing_is_written() {
    let r = Repo::new();
    for bad in [
        "src/[abc",
        "/etc",
        "src/../x",
        "src/a**",
        ":(exclude)src",
        "src/[[:alpha:]]",
    ] {
        let o = at(&r, T0, "ann", &["lease", "acquire", bad]);
        assert_eq!(code(&o), Some(2), "{bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("malformed lease pattern"),
            "{}",
            stderr(&o)
        );
        assert_eq!(code(&at(&r, T0, "ann", &["lease", "check", bad])), Some(2));
    }
    assert_eq!(r.rev("refs/jules/lease"), None);
}

#[test]
fn expiry_and_renewal_follow_the_pinned_clock() {
    let r = Repo::new();
    let v = json(&at(
        &r,
        T0,
        "ann",
        &["--json", "lease", "acquire", "src", "--ttl", "30m"],
    ));
    let id = v["lease"]["id"].as_str().unwrap().to_owned();
    // At 10:20 it is live; renew for 1h moves the expiry to 11:20.
    let o = at(
        &r,
        "2030-01-01T10:20:00Z",
        "ann",
        &["--json", "lease", "renew", &id, "--ttl", "1h"],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["expires_at"], "2030-01-01T11:20:00Z");
    // At 10:45 (past the first expiry) bob is still refused.
    assert_eq!(
        code(&at(
            &r,
            "2030-01-01T10:45:00Z",
            "bob",
            &["lease", "acquire", "src/a"]
        )),
        Some(3)
    );
    // At 11:30 the lease has expired: list hides it (shows it with --all), renew refuses, bob may take over.
    let late = "2030-01-01T11:30:00Z";
    let listed = json(&r.jules_at(late, ["--json", "lease", "list"]));
    assert_eq!(listed["leases"].as_array().unwrap().len(), 0, "{listed}");
    let all = json(&r.jules_at(late, ["--json", "lease", "list", "--all"]));
    assert_eq!(all["leases"][0]["live"], false);
    assert_eq!(all["leases"][0]["expires_in"], -600);
    let o = at(&r, late, "ann", &["lease", "renew", &id]);
    assert_eq!(code(&o), Some(3));
    assert!(
        stderr(&o).contains("expired at 2030-01-01T11:20:00Z"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        code(&at(&r, late, "bob", &["lease", "acquire", "src/a"])),
        Some(0)
    );
}

#[test]
fn the_holder_is_mailed_before_expiry_once_and_when_someone_takes_over() {
    let r = Repo::new();
    ok_at(
        &r,
        T0,
        "ann",
        &[
            "lease", "acquire", "src", "--ttl", "1h", "--reason", "refactor",
        ],
    );
    // 40 minutes before expiry, with a 15-minute lead: nothing yet.
    let o = r.jules_at(
        "2030-01-01T10:20:00Z",
        ["--json", "lease", "remind", "--lead", "15m"],
    );
    assert_eq!(json(&o)["reminded"].as_array().unwrap().len(), 0);
    // 10 minutes before: one mail; a second run sends none.
    for n in [1, 0] {
        let o = r.jules_at(
            "2030-01-01T10:50:00Z",
            ["--json", "lease", "remind", "--lead", "15m"],
        );
        assert_eq!(json(&o)["reminded"].as_array().unwrap().len(), n);
    }
    let mail = inbox(&r, "ann");
    assert!(mail.contains("expires at 2030-01-01T11:00:00Z"), "{mail}");
    assert_eq!(mail.matches("expires at").count(), 1, "{mail}");
    // After expiry bob acquires overlapping paths: ann is told who took over.
    let o = at(
        &r,
        "2030-01-01T11:05:00Z",
        "bob",
        &["--json", "lease", "acquire", "src/x.rs"],
    );
    assert_eq!(json(&o)["took_over"][0]["persona"], "ann");
    let mail = inbox(&r, "ann");
    assert!(mail.contains("taken over by bob"), "{mail}");
}

#[test]
fn a_forced_release_is_an_event_with_a_reason_and_mails_the_holder() {
    let r = Repo::new();
    let v = json(&at(&r, T0, "ann", &["--json", "lease", "acquire", "docs/"]));
    let id = v["lease"]["id"].as_str().unwrap().to_owned();
    let o = at(
        &r,
        T0,
        "lead",
        &[
            "--json",
            "lease",
            "release",
            &id[..10],
            "--force",
            "--reason",
            "ann is offline",
        ],
    );
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let released = &json(&o)["released"][0];
    assert_eq!(released["state"], "released");
    assert_eq!(released["forced"], true);
    assert_eq!(released["by"], "lead");
    assert_eq!(released["release_reason"], "ann is offline");
    let mail = inbox(&r, "ann");
    assert!(mail.contains("released by lead"), "{mail}");
    assert_eq!(
        code(&at(&r, T0, "bob", &["lease", "acquire", "docs/x"])),
        Some(0)
    );
}

#[test]
fn two_offline_clones_see_the_same_single_holder_after_sync() {
    let (a, _bare, b) = Repo::with_clone();
    assert_eq!(
        code(&at(&a, T0, "ann", &["lease", "acquire", "src/*.rs"])),
        Some(0)
    );
    assert_eq!(
        code(&at(&b, T0, "bob", &["lease", "acquire", "src/lib.rs"])),
        Some(0)
    );
    for r in [&a, &b, &a] {
        r.jules_ok(["sync"]);
    }
    let holders = |r: &Repo| {
        let v = json(&r.jules_at(T0, ["--json", "lease", "list"]));
        v["leases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["persona"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let (ha, hb) = (holders(&a), holders(&b));
    assert_eq!(ha.len(), 1, "{ha:?}");
    assert_eq!(ha, hb);
    // The loser's lease is listed as denied, naming the holder's lease.
    let all = json(&b.jules_at(T0, ["--json", "lease", "list", "--all"]));
    let denied: Vec<_> = all["leases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["state"] == "denied")
        .collect();
    assert_eq!(denied.len(), 1, "{all}");
    assert_ne!(denied[0]["persona"].as_str().unwrap(), ha[0]);
}

#[test]
fn the_pre_commit_hook_refuses_a_commit_under_another_personas_lease() {
    let r = Repo::new();
    let o = r.jules(["--json", "hooks", "install", "--hook", "pre-commit"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["hook"], "pre-commit");
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/", "--reason", "mine"],
    );
    r.write("src/a.rs", "x\n");
    r.write("notes.txt", "y\n");
    r.git(["add", "-A"]);
    let commit = |persona: Option<&str>| {
        let mut c = r.git_cmd(["commit", "-qm", "change"]);
        c.env("GIT_COMMITTER_DATE", T0);
        if let Some(p) = persona {
            c.env("JULES_PERSONA", p);
        }
        c.output().unwrap()
    };
    let o = commit(Some("bob"));
    assert!(!o.status.success());
    let err = stderr(&o);
    for want in ["src/a.rs", "ann", "until", "commit refused"] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Warn mode lets it through, still naming the holder; the holder commits freely.
    r.git(["config", "jules.lease.preCommit", "warn"]);
    let o = commit(Some("bob"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("ann"), "{}", stderr(&o));
    r.git(["config", "jules.lease.preCommit", "refuse"]);
    r.write("src/b.rs", "z\n");
    r.git(["add", "-A"]);
    let o = commit(Some("ann"));
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_pre_push_hook_refuses_a_series_touching_another_personas_lease() {
    let r = Repo::new();
    let bare = r.bare_sibling();
    r.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    r.git(["push", "-q", "origin", "main"]);
    r.jules_ok(["hooks", "install"]);
    r.git(["config", "jules.verify.prePush", "off"]);
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/", "--reason", "mine"],
    );
    r.git(["checkout", "-qb", "jules/staging/x"]);
    r.git(["config", "branch.jules/staging/x.julesBase", "main"]);
    r.write("src/a.rs", "x\n");
    r.commit_all("touch src");
    let push = |persona: &str| {
        let mut c = r.git_cmd(["push", "-q", "origin", "jules/staging/x"]);
        c.env("JULES_PERSONA", persona)
            .env("GIT_COMMITTER_DATE", T0);
        c.output().unwrap()
    };
    let o = push("bob");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("push refused") && err.contains("ann") && err.contains("src/a.rs"),
        "{err}"
    );
    assert_eq!(bare.rev("refs/heads/jules/staging/x"), None);
    let o = push("ann");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn task_done_releases_the_leases_acquired_for_the_task() {
    let r = Repo::new();
    let task = r
        .jules_ok(["task", "add", "tidy", "--persona", "ann"])
        .trim()
        .to_owned();
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/", "--task", &task],
    );
    ok_at(&r, T0, "ann", &["lease", "acquire", "docs/"]);
    ok_as(&r, "ann", &["task", "done", &task]);
    assert_eq!(held_paths(&r), ["docs/"]);
    // Turned off, nothing is released.
    r.git(["config", "jules.lease.releaseOnDone", "false"]);
    let t2 = r
        .jules_ok(["task", "add", "more", "--persona", "ann"])
        .trim()
        .to_owned();
    ok_at(&r, T0, "ann", &["lease", "acquire", "lib/", "--task", &t2]);
    ok_as(&r, "ann", &["task", "done", &t2]);
    assert_eq!(held_paths(&r), ["docs/", "lib/"]);
}

#[test]
fn series_finalize_releases_the_personas_leases_on_what_landed() {
    let r = Repo::new();
    ok_at(&r, T0, "ann", &["lease", "acquire", "a.txt"]);
    ok_at(&r, T0, "ann", &["lease", "acquire", "elsewhere/"]);
    crate::series::make_series(&r, "feat", &[("a.txt", "a\n")]);
    ok_as(&r, "ann", &["series", "finalize", "--no-verify"]);
    assert_eq!(held_paths(&r), ["elsewhere/"]);
}

#[test]
fn weave_names_the_lease_on_a_conflicting_path() {
    let r = Repo::new();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    r.write("src/x.rs", &text);
    r.commit_all("project");
    for (branch, new) in [
        ("jules/curator/a", "line 5 curated"),
        ("jules/refactor/b", "line 5 renamed"),
    ] {
        r.git(["switch", "-q", "-c", branch, "main"]);
        r.write("src/x.rs", &text.replace("line 5\n", &format!("{new}\n")));
        r.commit_all(branch);
        r.git(["switch", "-q", "main"]);
    }
    ok_at(
        &r,
        T0,
        "curator",
        &["lease", "acquire", "src/", "--reason", "curating"],
    );
    let o = r.jules_at(
        T0,
        [
            "--json",
            "weave",
            "--check",
            "jules/curator/a",
            "jules/refactor/b",
        ],
    );
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    let rep = json(&o);
    let f = &rep["conflicted"][0]["conflicts"][0];
    assert_eq!(f["path"], "src/x.rs", "{rep}");
    assert_eq!(f["leases"][0]["persona"], "curator", "{rep}");
    assert_eq!(f["leases"][0]["reason"], "curating");
    let o = r.jules_at(
        T0,
        ["weave", "--check", "jules/curator/a", "jules/refactor/b"],
    );
    assert!(stdout(&o).contains("under lease"), "{}", stdout(&o));
}

#[test]
fn tick_holds_back_a_persona_whose_task_paths_are_under_another_lease() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"curator\", \"refactor\"]\n",
    );
    r.jules_ok([
        "task",
        "add",
        "tidy x",
        "--persona",
        "curator",
        "--path",
        "src/x.rs",
    ]);
    let dry = |r: &Repo| -> serde_json::Value {
        json(&r.jules([
            "tick",
            "--dry-run",
            "--json",
            "--now",
            "2030-01-01T10:30:00Z",
        ]))
    };
    // Without a lease the curator is first.
    assert_eq!(dry(&r)["decisions"][0]["persona"], "curator");
    ok_at(
        &r,
        T0,
        "refactor",
        &[
            "lease", "acquire", "src/", "--ttl", "1h", "--reason", "rename",
        ],
    );
    let plan = dry(&r);
    let launched: Vec<&str> = plan["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["persona"].as_str().unwrap())
        .collect();
    assert!(!launched.contains(&"curator"), "{plan}");
    let why = plan["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["persona"] == "curator")
        .unwrap()["why"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        why.contains("held back") && why.contains("refactor") && why.contains("src/x.rs"),
        "{why}"
    );
    // Past the lease's expiry the curator runs again.
    let later = json(&r.jules([
        "tick",
        "--dry-run",
        "--json",
        "--now",
        "2030-01-01T11:30:00Z",
    ]));
    assert_eq!(later["decisions"][0]["persona"], "curator", "{later}");
    // A malformed path is refused when the task is added.
    let o = r.jules(["task", "add", "bad", "--path", "src/[x"]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
}

#[test]
fn a_range_check_names_no_commit_is_bad_input() {
    let r = Repo::new();
    for bad in ["nope..HEAD", "HEAD..nope", "not-a-commit"] {
        let o = r.jules(["lease", "check", "--diff", bad]);
        assert_eq!(code(&o), Some(2), "{bad}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("cannot read the range {bad:?}")),
            "{bad}: {}",
            stderr(&o)
        );
    }
    // A good range still checks (and finds nothing: no leases).
    r.write("a.txt", "a\n");
    r.commit_all("a");
    let o = r.jules(["--json", "lease", "check", "--diff", "HEAD~1..HEAD"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["checked"], 1);
}

/// The mails `persona` got whose subject says a lease expires.
fn reminders(r: &Repo, persona: &str) -> usize {
    inbox(r, persona).matches("expires at").count()
}

#[test]
fn sync_and_tick_remind_holders_once_even_across_clones() {
    let (a, _bare, b) = Repo::with_clone();
    ok_at(&a, T0, "ann", &["lease", "acquire", "src", "--ttl", "1h"]);
    ok_at(&a, T0, "bob", &["lease", "acquire", "docs", "--ttl", "2h"]);
    a.jules_ok(["sync"]);
    // 40 minutes before ann's expiry, with the default 15-minute lead: nothing is due.
    let o = a.jules_at("2030-01-01T10:20:00Z", ["--json", "sync"]);
    assert_eq!(json(&o)["reminded"].as_array().unwrap().len(), 0);
    b.jules_ok(["sync"]);
    assert_eq!(reminders(&b, "ann"), 0);
    // 10 minutes before: clone b's sync mails ann, records it and publishes both.
    let o = b.jules_at("2030-01-01T10:50:00Z", ["--json", "sync"]);
    let v = json(&o);
    assert_eq!(v["reminded"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["reminded"][0]["persona"], "ann");
    // Clone a syncs after: it sees the record and mails nobody again; so does a tick.
    let o = a.jules_at("2030-01-01T10:51:00Z", ["--json", "sync"]);
    assert_eq!(
        json(&o)["reminded"].as_array().unwrap().len(),
        0,
        "{}",
        stdout(&o)
    );
    assert_eq!(reminders(&a, "ann"), 1);
    a.write(".jules/schedules.toml", "[cycle]\norder = [\"curator\"]\n");
    let tick = |r: &Repo, when: &str| -> serde_json::Value {
        json(&r.jules(["tick", "--json", "--now", when]))
    };
    assert_eq!(
        tick(&a, "2030-01-01T10:52:00Z")["reminded"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // A renewal is a new expiry: the next reminder is due again before it, and a tick sends it.
    let id = json(&a.jules_at(T0, ["--json", "lease", "list", "--persona", "ann"]))["leases"][0]
        ["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ok_at(
        &a,
        "2030-01-01T10:55:00Z",
        "ann",
        &["lease", "renew", &id, "--ttl", "20m"],
    );
    let t = tick(&a, "2030-01-01T11:05:00Z");
    assert_eq!(t["reminded"].as_array().unwrap().len(), 1, "{t}");
    assert_eq!(t["reminded"][0]["expires_at"], "2030-01-01T11:15:00Z");
    assert_eq!(reminders(&a, "ann"), 2);
    // bob's lease (11:55 is 2h after T0 minus 5 min) is reminded by the same tick run later, once.
    assert_eq!(
        tick(&a, "2030-01-01T11:50:00Z")["reminded"][0]["persona"],
        "bob"
    );
    assert_eq!(
        tick(&a, "2030-01-01T11:51:00Z")["reminded"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn the_pre_commit_hook_sees_what_commit_a_and_a_removal_commit() {
    let r = Repo::new();
    r.write("src/a.rs", "a\n");
    r.write("src/keep.rs", "k\n");
    r.write("free.txt", "f\n");
    r.commit_all("base");
    r.jules_ok(["hooks", "install", "--hook", "pre-commit"]);
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/a.rs", "--reason", "mine"],
    );
    let commit = |args: &[&str]| {
        let mut c = r.git_cmd(args);
        c.env("GIT_COMMITTER_DATE", T0).env("JULES_PERSONA", "bob");
        c.output().unwrap()
    };
    // Changed in the work tree only: `git commit -a` commits it through a temporary index.
    r.write("src/a.rs", "changed\n");
    let o = commit(&["commit", "-qam", "change"]);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("src/a.rs: under lease"),
        "{}",
        stderr(&o)
    );
    // `git commit PATH` too.
    let o = commit(&["commit", "-qm", "change", "--", "src/a.rs"]);
    assert!(!o.status.success(), "{}", stderr(&o));
    r.git(["checkout", "--", "src/a.rs"]);
    // A removal is a change of the path.
    r.git(["rm", "-q", "src/a.rs"]);
    let o = commit(&["commit", "-qm", "remove"]);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("src/a.rs"), "{}", stderr(&o));
    r.git(["reset", "-q", "--hard"]);
    // What the lease does not cover commits, in a subdirectory next to the leased file too.
    r.write("src/keep.rs", "k2\n");
    r.write("free.txt", "f2\n");
    let o = commit(&["commit", "-qam", "free"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Off turns the hook off.
    r.git(["config", "jules.lease.preCommit", "off"]);
    r.write("src/a.rs", "again\n");
    let o = commit(&["commit", "-qam", "off"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_binary_linked_as_the_pre_commit_hook_runs_the_check_without_a_shell() {
    // git execs an executable hook directly; named `pre-commit`, the binary runs the staged lease check.
    let r = Repo::new();
    let hooks = r.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::os::unix::fs::symlink(crate::harness::bin(), hooks.join("pre-commit")).unwrap();
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/", "--reason", "mine"],
    );
    r.write("src/a.rs", "x\n");
    r.git(["add", "-A"]);
    let commit = |persona: &str| {
        let mut c = r.git_cmd(["commit", "-qm", "change"]);
        c.env("GIT_COMMITTER_DATE", T0)
            .env("JULES_PERSONA", persona);
        c.output().unwrap()
    };
    let o = commit("bob");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("commit refused"), "{}", stderr(&o));
    let o = commit("ann");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `git-jules ARGS` run from a copy of the binary at `exe` (so that the hook it installs names that copy),
/// with `PATH` left without any git-jules.
fn jules_from(r: &Repo, exe: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new(exe);
    r.env.apply(&mut c);
    c.current_dir(r.path())
        .args(args)
        .env("PATH", path_without_jules());
    // A copy just written may be briefly open for writing in a child another test thread forked (ETXTBSY,
    // "text file busy", until that child execs).
    const ETXTBSY: i32 = 26;
    for _ in 0..50 {
        match c.output() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            o => return o.unwrap(),
        }
    }
    c.output().unwrap()
}

/// The binary under test at `to`: a hard link where it can be (no file open for writing, which a child
/// forked meanwhile by another test thread would keep busy), else a copy.
fn place_binary(to: &std::path::Path) {
    if std::fs::hard_link(crate::harness::bin(), to).is_err() {
        std::fs::copy(crate::harness::bin(), to).unwrap();
    }
}

/// PATH without the directories that hold a `git-jules`.
fn path_without_jules() -> std::ffi::OsString {
    let bin_dir = crate::harness::bin().parent().unwrap().to_owned();
    let path: Vec<_> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|p| p != &bin_dir && !p.join("git-jules").exists())
        .collect();
    std::env::join_paths(path).unwrap()
}

#[test]
fn the_pre_commit_hook_refuses_the_commit_when_the_binary_is_gone() {
    // The installed hook names the binary on its `#!` line: git execs it with no shell. When the binary is
    // deleted, git cannot exec the hook and refuses the commit (a dangling symlink hook would be skipped by
    // git, which is why install does not write one).
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("git-jules");
    place_binary(&exe);
    let o = jules_from(&r, &exe, &["hooks", "install", "--hook", "pre-commit"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let hook = std::fs::read_to_string(r.path().join(".git/hooks/pre-commit")).unwrap();
    assert_eq!(
        hook.lines().next(),
        Some(format!("#!{} --pre-commit-hook", exe.display()).as_str())
    );
    r.write("a.txt", "x\n");
    r.git(["add", "-A"]);
    // It runs the check: a clean commit goes through.
    let o = r.git_cmd(["commit", "-qm", "clean"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&exe).unwrap();
    r.write("a.txt", "y\n");
    r.git(["add", "-A"]);
    let o = r.git_cmd(["commit", "-qm", "change"]).output().unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot exec"), "{}", stderr(&o));
    assert_eq!(r.git(["rev-list", "--count", "HEAD"]).trim(), "2");
}

#[test]
fn a_binary_path_no_hash_bang_line_can_carry_gets_the_shim_which_fails_closed_too() {
    // A blank in the binary's path: the hook is the sh shim, which finds git-jules on PATH and refuses the
    // commit when it is not there. Installing from a binary a `#!` line can name updates the shim in place.
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("with blank")).unwrap();
    let exe = dir.path().join("with blank/git-jules");
    place_binary(&exe);
    let o = jules_from(&r, &exe, &["hooks", "install", "--hook", "pre-commit"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let path = r.path().join(".git/hooks/pre-commit");
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("#!/bin/sh\n"));
    r.write("a.txt", "x\n");
    r.git(["add", "-A"]);
    let o = r
        .git_cmd(["commit", "-qm", "change"])
        .env("PATH", path_without_jules())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not on PATH"), "{}", stderr(&o));
    // Ours, so no --force is needed and no backup is kept.
    let o = r.jules(["--json", "hooks", "install", "--hook", "pre-commit"]);
    assert_eq!(json(&o)["action"], "updated", "{}", stderr(&o));
    assert!(json(&o)["backup"].is_null());
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains(" --pre-commit-hook\n"));
    let o = r.git_cmd(["commit", "-qm", "change"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A lease log whose local ref names a missing object (a damaged repository) turned enforcement off without
/// a word: readers skipped the tip, so `lease check` and the pre-commit hook found no conflict and exited 0.
/// A damaged local log is now an error every reader reports, and the hook refuses the commit (it cannot tell
/// whether the change is free), naming the ref.
#[test]
fn a_lease_log_naming_a_missing_object_fails_closed() {
    let r = Repo::new();
    r.jules_ok(["hooks", "install", "--hook", "pre-commit"]);
    ok_at(
        &r,
        T0,
        "ann",
        &["lease", "acquire", "src/", "--reason", "mine"],
    );
    let missing = "0123456789abcdef0123456789abcdef01234567";
    r.git(["update-ref", "--no-deref", "-d", "refs/jules/lease"]);
    std::fs::write(
        r.path().join(".git/refs/jules/lease"),
        format!("{missing}\n"),
    )
    .unwrap();
    let o = at(&r, T0, "bob", &["lease", "check", "src/a.rs"]);
    assert_eq!(code(&o), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("refs/jules/lease") && stderr(&o).contains(missing),
        "{}",
        stderr(&o)
    );
    r.write("src/a.rs", "x\n");
    r.git(["add", "-A"]);
    let o = r
        .git_cmd(["commit", "-qm", "change"])
        .env("JULES_PERSONA", "bob")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the hook must not let it through");
    assert!(stderr(&o).contains("refs/jules/lease"), "{}", stderr(&o));
}
