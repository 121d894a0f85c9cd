//! Sprint state: cycle_state import/show, runs, sprints, tasks.

use crate::harness::{stderr, Repo};

fn seed_dict() -> serde_json::Value {
    // Twelve runs, so that numeric key order ("2" before "10") differs from string order.
    let mut history = serde_json::Map::new();
    for i in (0..12).rev() {
        let persona = ["curator", "refactor", "visionary"][i % 3];
        history.insert(
            i.to_string(),
            serde_json::json!({
                "persona_id": persona,
                "session_id": format!("sess-{i}"),
                "pr_number": if i % 2 == 0 { serde_json::json!(2400 + i) } else { serde_json::Value::Null },
                "created_at": format!("2026-01-14T10:{i:02}:00Z"),
                "track": "default",
            }),
        );
    }
    serde_json::json!({
        "history": history,
        "tracks": {
            "default": {
                "persona_id": "refactor",
                "session_id": "67890",
                "pr_number": null,
                "updated_at": "2026-01-14T11:00:00Z"
            }
        }
    })
}

#[test]
fn import_of_the_dict_form_shows_back_the_seed_shape_in_numeric_order() {
    let r = Repo::new();
    let doc = seed_dict();
    r.write(
        ".jules/cycle_state.json",
        &serde_json::to_string_pretty(&doc).unwrap(),
    );
    let out = r.jules_ok(["state", "import", ".jules/cycle_state.json", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["runs"], 12);
    assert_eq!(report["added"], 13);
    let shown = r.jules_ok(["state", "show", "--json"]);
    let mut parsed: serde_json::Value = serde_json::from_str(&shown).unwrap();
    // Seed 004's shape, plus the "version" every --json document carries.
    assert_eq!(parsed["version"], 1);
    parsed.as_object_mut().unwrap().remove("version");
    assert_eq!(parsed, doc);
    let pos = |k: &str| shown.find(&format!("\"{k}\": {{")).unwrap();
    assert!(
        pos("2") < pos("10"),
        "keys must be in numeric order:\n{shown}"
    );
    assert!(pos("9") < pos("11"));
    // Importing again adds nothing.
    let again: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["state", "import", ".jules/cycle_state.json", "--json"]))
            .unwrap();
    assert_eq!(again["added"], 0);
    assert_eq!(again["already_present"], 13);
    assert_eq!(r.git(["rev-list", "--count", "refs/jules/state"]), "13");
}

#[test]
fn import_of_the_legacy_list_form_converts_to_the_dict() {
    let r = Repo::new();
    let legacy = serde_json::json!({
        "history": [
            {"last_persona_id": "curator", "last_session_id": "a1", "last_pr_number": 7, "created_at": "2026-01-01T00:00:00Z", "track": "default"},
            {"persona_id": "refactor", "session_id": "b2", "pr_number": null, "created_at": "2026-01-02T00:00:00Z", "track": "docs"}
        ],
        "tracks": {}
    });
    r.write("old.json", &legacy.to_string());
    r.jules_ok(["state", "import", "old.json"]);
    let shown: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["state", "show", "--json"])).unwrap();
    assert_eq!(
        shown["history"],
        serde_json::json!({
            "0": {"persona_id": "curator", "session_id": "a1", "pr_number": 7, "created_at": "2026-01-01T00:00:00Z", "track": "default"},
            "1": {"persona_id": "refactor", "session_id": "b2", "pr_number": null, "created_at": "2026-01-02T00:00:00Z", "track": "docs"}
        })
    );
    // Tracks follow the latest run of each track.
    assert_eq!(shown["tracks"]["docs"]["persona_id"], "refactor");
    assert_eq!(shown["tracks"]["default"]["session_id"], "a1");
    let bad = r.jules(["state", "import", "README"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not valid JSON"), "{}", stderr(&bad));
}

#[test]
fn record_done_sprints_notes_and_tasks() {
    let r = Repo::new();
    assert_eq!(r.jules_ok(["sprint", "start"]).trim(), "1");
    let run = r.jules_ok([
        "state",
        "record",
        "--persona",
        "curator",
        "--session",
        "s-1",
        "--pr",
        "12",
    ]);
    assert_eq!(run.trim().len(), 12);
    r.jules_ok(["state", "done", "--session", "s-1", "--status", "failed"]);
    let shown: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["state", "show", "--json"])).unwrap();
    assert_eq!(shown["history"]["0"]["status"], "failed");
    assert_eq!(shown["history"]["0"]["pr_number"], 12);
    assert_eq!(shown["tracks"]["default"]["session_id"], "s-1");
    let unknown = r.jules(["state", "done", "--session", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));

    r.jules_ok([
        "sprint",
        "note",
        "--persona",
        "curator",
        "--kind",
        "plan",
        "--text",
        "tidy the docs",
    ]);
    let bad = r.jules([
        "sprint",
        "note",
        "--persona",
        "curator",
        "--kind",
        "gossip",
        "--text",
        "x",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let task = r.jules_ok(["task", "add", "write the changelog", "--persona", "scribe"]);
    let other = r.jules_ok(["task", "add", "drop the old flag"]);
    r.jules_ok(["task", "done", task.trim()]);
    r.jules_ok(["task", "cancel", other.trim()]);
    let again = r.jules(["task", "done", task.trim()]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "a done task cannot be done again"
    );
    let tasks = crate::harness::json_items(&r.jules_ok(["task", "ls", "--json"]));
    let states: Vec<&str> = tasks.iter().map(|t| t["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["done", "canceled"]);
    let status: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["sprint", "status", "--json"])).unwrap();
    assert_eq!(status["sprint"]["number"], 1);
    assert_eq!(status["sprint"]["notes"][0]["text"], "tidy the docs");
    r.jules_ok(["sprint", "close"]);
    assert_eq!(r.jules(["sprint", "close", "1"]).status.code(), Some(2));
    assert_eq!(r.jules_ok(["sprint", "start"]).trim(), "2");
    assert_eq!(r.jules(["sprint", "start", "2"]).status.code(), Some(2));
}

#[test]
fn a_finished_run_stays_finished_like_a_task() {
    let r = Repo::new();
    let run = r.jules_ok(["state", "record", "--persona", "p", "--session", "S1"]);
    assert!(!run.trim().is_empty());
    r.jules_ok(["state", "done", "--session", "S1", "--status", "ok"]);
    let again = r.jules(["state", "done", "--session", "S1", "--status", "failed"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("is already ok"),
        "{}",
        stderr(&again)
    );
    let shown: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["state", "show", "--json"])).unwrap();
    assert_eq!(shown["history"]["0"]["status"], "ok", "{shown}");
}

/// A float in imported data once became an event that `log fsck` then called non-canonical (found by the
/// property tests in src/store/eventlog/prop_tests.rs): events hold only integers, so the import is refused whole.
#[test]
fn import_refuses_fractions_instead_of_writing_events_fsck_rejects() {
    let r = Repo::new();
    let doc = serde_json::json!({
        "history": {"0": {"persona_id": "curator", "session_id": "a1", "pr_number": 7.5,
                          "created_at": "2026-01-01T00:00:00Z", "track": "default"}},
        "tracks": {}
    });
    r.write("fraction.json", &doc.to_string());
    let out = r.jules(["state", "import", "fraction.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("only integers"), "{}", stderr(&out));
    assert!(stderr(&out).contains("7.5"), "{}", stderr(&out));
    // Nothing was written, and what is there passes the strict check.
    assert_eq!(r.rev("refs/jules/state"), None);
    r.jules_ok([
        "state",
        "record",
        "--persona",
        "curator",
        "--session",
        "s",
        "--pr",
        "1",
    ]);
    r.jules_ok(["log", "fsck", "state"]);
}
