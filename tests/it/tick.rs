//! `git jules tick` and `git jules prompt` through the real binary, with scripted launchers.

use std::process::Stdio;

use crate::harness::{stderr, stdout, Repo};

const FIVE: &str =
    "[cycle]\norder = [\"curator\", \"refactor\", \"visionary\", \"scribe\", \"janitor\"]\n";

/// A launcher that logs who it launched (outside the repo) and prints a session id.
fn launcher(dir: &std::path::Path) -> String {
    let log = dir.join("launched.txt");
    format!(
        "echo \"$JULES_PERSONA $JULES_REASON $JULES_SPRINT\" >> '{}'; echo \"sess-$JULES_PERSONA-$(echo $JULES_RUN | cut -c1-8)\"",
        log.display()
    )
}

fn launched(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("launched.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect()
}

fn tick(r: &Repo, launch: &str) -> serde_json::Value {
    serde_json::from_str(&r.jules_ok(["tick", "--json", "--launch", launch])).unwrap()
}

fn finish_all(r: &Repo, report: &serde_json::Value) {
    for run in report["runs"].as_array().unwrap() {
        r.jules_ok([
            "state",
            "done",
            "--session",
            run["session_id"].as_str().unwrap(),
        ]);
    }
}

#[test]
fn a_sequential_cycle_of_five_over_several_ticks() {
    let r = Repo::new();
    let out = tempfile::tempdir().unwrap();
    r.write(".jules/schedules.toml", FIVE);
    r.jules_ok(["sprint", "start"]);
    let launch = launcher(out.path());
    for _ in 0..7 {
        let report = tick(&r, &launch);
        assert_eq!(report["runs"].as_array().unwrap().len(), 1, "{report}");
        // While the session runs, a tick launches nothing.
        let idle = tick(&r, &launch);
        assert_eq!(idle["runs"].as_array().unwrap().len(), 0);
        assert_eq!(idle["waiting"][0]["persona"], report["runs"][0]["persona"]);
        finish_all(&r, &report);
    }
    assert_eq!(
        launched(out.path()),
        [
            "curator",
            "refactor",
            "visionary",
            "scribe",
            "janitor",
            "curator",
            "refactor"
        ]
    );
    let state: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["state", "show", "--json"])).unwrap();
    assert_eq!(state["history"]["6"]["persona_id"], "refactor");
    assert!(state["history"]["0"]["session_id"]
        .as_str()
        .unwrap()
        .starts_with("sess-curator-"));
    assert_eq!(state["history"]["0"]["status"], "ok");
    // --dry-run decides without recording.
    let before = r.rev("refs/jules/state");
    let dry: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["tick", "--dry-run", "--json"])).unwrap();
    assert_eq!(dry["recorded"], false);
    assert_eq!(dry["decisions"][0]["persona"], "visionary");
    assert_eq!(r.rev("refs/jules/state"), before);
}

#[test]
fn a_parallel_sprint_launches_everyone_at_once_then_the_weaver() {
    let r = Repo::new();
    let out = tempfile::tempdir().unwrap();
    r.write(
        ".jules/schedules.toml",
        &format!("{FIVE}[parallel]\nsprints = [1]\n"),
    );
    r.jules_ok(["sprint", "start"]);
    let launch = launcher(out.path());
    let report = tick(&r, &launch);
    assert_eq!(report["mode"], "parallel");
    assert_eq!(report["runs"].as_array().unwrap().len(), 5);
    assert_eq!(
        launched(out.path()),
        ["curator", "refactor", "visionary", "scribe", "janitor"]
    );
    finish_all(&r, &report);
    let weave = tick(&r, &launch);
    assert_eq!(weave["runs"][0]["persona"], "weaver");
    assert_eq!(weave["runs"][0]["reason"], "weave");
    finish_all(&r, &weave);
    let done = tick(&r, &launch);
    assert_eq!(done["complete"], true, "{done}");
    let stats = crate::harness::json_items(&r.jules_ok(["sprint", "stats", "--json"]));
    assert_eq!(stats[0]["ticks_used"], 2);
    assert_eq!(stats[0]["weaves"], 1);
}

#[test]
fn consolidation_relaunches_exactly_those_with_unread_mail_and_respects_max_retries() {
    let r = Repo::new();
    let out = tempfile::tempdir().unwrap();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"curator\"]\n[schedules.scribe]\ncron = \"0 0 1 1 *\"\n[groups]\nleads = [\"lead\"]\n[alerts]\ngroup = \"leads\"\n",
    );
    r.jules_ok(["sprint", "start"]);
    let launch = launcher(out.path());
    // scribe (known through its schedule) gets mail; curator is only in the cycle.
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "weaver",
        "--to",
        "scribe",
        "--subject",
        "conflict",
        "--body",
        "fix it",
    ]);
    let first = tick(&r, &launch);
    let who: Vec<&str> = first["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["persona"].as_str().unwrap())
        .collect();
    assert_eq!(who, ["curator", "scribe"]);
    assert!(first["decisions"][1]["context"]
        .as_str()
        .unwrap()
        .contains("1 unread message(s). Read them with: git jules mail inbox --persona scribe"));
    finish_all(&r, &first);
    // scribe never reads its mail: two more relaunches (3 in all), then it is skipped and the group alerted.
    for _ in 0..2 {
        let t = tick(&r, &launch);
        assert!(
            t["runs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["persona"] == "scribe"),
            "{t}"
        );
        finish_all(&r, &t);
    }
    let t = tick(&r, &launch);
    assert!(
        !t["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["persona"] == "scribe"),
        "{t}"
    );
    assert_eq!(t["skipped"][0]["persona"], "scribe");
    finish_all(&r, &t);
    let inbox: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["mail", "inbox", "--persona", "lead", "--json"]))
            .unwrap();
    let text = inbox.to_string();
    assert!(text.contains("scribe skipped: retries exhausted"), "{text}");
    // Once read, the mail no longer relaunches anyone; the alert is not repeated.
    let id = r.jules_ok(["mail", "inbox", "--persona", "scribe", "--json"]);
    let items: serde_json::Value = serde_json::from_str(&id).unwrap();
    let msg = items.to_string();
    let mid = msg
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    r.jules_ok(["mail", "read", &mid, "--persona", "scribe"]);
    let t = tick(&r, &launch);
    assert!(!t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["persona"] == "scribe"));
    let inbox: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["mail", "inbox", "--persona", "lead", "--json"]))
            .unwrap();
    assert_eq!(inbox.to_string().matches("retries exhausted").count(), 1);
}

#[test]
fn two_schedulers_ticking_at_once_never_launch_the_same_run_twice() {
    let r = Repo::new();
    let out = tempfile::tempdir().unwrap();
    r.write(".jules/schedules.toml", FIVE);
    r.jules_ok(["sprint", "start"]);
    let launch = launcher(out.path());
    // Each round, both ticks are held just before they record their plans (`src/kit/testhook.rs`: the state
    // append, objects written, ref not moved) until both are there: they provably planned from the same
    // state, so one record must fail its compare-and-swap and that tick plan again. Started back to back
    // without the hold, one tick often finished before the other began and the race was never run.
    for round in 0..5 {
        let marks = tempfile::tempdir().unwrap();
        let children: Vec<_> = (0..2)
            .map(|_| {
                crate::harness::Guarded::spawn(
                    r.jules_cmd(["tick", "--json", "--launch", &launch])
                        .env("JULES_TEST_PAUSE_AT", "append refs/jules/state")
                        .env("JULES_TEST_PAUSE_DIR", marks.path())
                        .env("JULES_TEST_PAUSE_UNTIL", "2")
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped()),
                )
            })
            .collect();
        // Both ticks finish before any run is marked done: a tick that started late would otherwise see
        // the other's run finished and rightly launch the next persona.
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_output(std::time::Duration::from_secs(300)))
            .collect();
        let mut total = 0;
        for o in outputs {
            assert!(o.status.success(), "{}", stderr(&o));
            let rep: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
            total += rep["runs"].as_array().unwrap().len();
            for run in rep["runs"].as_array().unwrap() {
                r.jules_ok([
                    "state",
                    "done",
                    "--session",
                    run["session_id"].as_str().unwrap(),
                ]);
            }
        }
        assert_eq!(
            std::fs::read_dir(marks.path()).unwrap().count(),
            2,
            "round {round}: both ticks reached the record together"
        );
        assert_eq!(total, 1, "round {round}: exactly one scheduler launches");
    }
    assert_eq!(
        launched(out.path()),
        ["curator", "refactor", "visionary", "scribe", "janitor"]
    );
}

#[test]
fn a_bad_schedules_file_is_refused_naming_the_line() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"curator\"]\n\n[schedules.janitor]\ncron = \"61 3 * * *\"\n",
    );
    let o = r.jules(["tick", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schedules.toml:5:"), "{}", stderr(&o));
    r.write(".jules/schedules.toml", "[cycle]\norder = [\"curator\"\n");
    let o = r.jules(["tick", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("schedules.toml:2:"), "{}", stderr(&o));
    std::fs::remove_file(r.path().join(".jules/schedules.toml")).unwrap();
    let o = r.jules(["tick"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no schedules"), "{}", stderr(&o));
}

#[test]
fn prompt_prints_the_mailbox_preamble_with_unread_messages() {
    let r = Repo::new();
    let empty = r.jules_ok(["prompt", "curator"]);
    assert!(empty.contains("## Mailbox Check (IMPORTANT)") && empty.contains("no unread messages"));
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "weaver",
        "--to",
        "curator",
        "--subject",
        "Conflict in src/x.rs",
        "--body",
        "b",
        "--priority",
        "urgent",
    ]);
    let text = r.jules_ok(["prompt", "curator"]);
    assert!(
        text.contains("git jules mail inbox --persona curator"),
        "{text}"
    );
    assert!(text.contains("You have 1 unread message(s)"), "{text}");
    assert!(
        text.contains("| weaver |") && text.contains("Conflict in src/x.rs (urgent)"),
        "{text}"
    );
}
