//! `git jules exchange`: seed-001 workstreams' hand-offs on `refs/jules/exchange`, across two clones.

use crate::harness::{stderr, stdout, Repo};
use crate::prompt::scaffold;

fn two_clones() -> (Repo, Repo, Repo) {
    let a = Repo::new();
    scaffold(&a);
    a.commit_all("scaffold");
    let bare = a.bare_sibling();
    a.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    a.git(["push", "-q", "origin", "main"]);
    let b = a.clone_of(bare.path());
    a.jules_ok(["init"]);
    b.jules_ok(["init"]);
    (a, b, bare)
}

const EVENT1: &str = "id: ev-flaky\ntitle: flaky test\nstatement: test_x fails one run in ten\nevidence:\n  - ci log 12\n";
const EVENT2: &str =
    "id: ev-slow\ntitle: slow build\nstatement: build takes 9 minutes\nevidence: []\n";
const ISSUE: &str = "id: iss-ci\ntitle: stabilise CI\nlabel: bugs\nsource_events:\n  - ev-flaky\n  - ev-slow\nrequires_deep_analysis: true\n";

#[test]
fn observer_and_decider_in_two_clones_then_one_winner_take_and_byte_stable_round_trip() {
    let (a, b, bare) = two_clones();
    a.write("ev1.yml", EVENT1);
    a.write("ev2.yml", EVENT2);
    for f in ["ev1.yml", "ev2.yml"] {
        a.jules_ok([
            "exchange",
            "add",
            "--workstream",
            "generic",
            "--kind",
            "event",
            "--file",
            f,
            "--actor",
            "qa",
        ]);
    }
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    let pending = b.jules_ok(["exchange", "list", "--workstream", "generic"]);
    assert_eq!(pending.matches(" pending").count(), 2, "{pending}");
    b.write("issue.yml", ISSUE);
    b.jules_ok([
        "exchange",
        "decide",
        "--workstream",
        "generic",
        "--file",
        "issue.yml",
        "--actor",
        "triage",
    ]);
    let j: serde_json::Value =
        serde_json::from_str(&b.jules_ok(["--json", "exchange", "list"])).unwrap();
    assert_eq!(j["version"], 1);
    let arts = j["artifacts"].as_array().unwrap();
    let states: Vec<(&str, &str)> = arts
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("ev-flaky", "decided"),
            ("ev-slow", "decided"),
            ("iss-ci", "open")
        ]
    );
    // Planners expand it (it is marked requires_deep_analysis).
    b.write("plan.yml", "steps:\n  - retry\n");
    b.jules_ok([
        "exchange",
        "expand",
        "iss-ci",
        "--workstream",
        "generic",
        "--file",
        "plan.yml",
    ]);
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);

    // Two implementers in two clones take the same issue at once: exactly one wins. The remote holds the
    // first take's push until the second's arrives, so they provably overlap.
    let held = crate::harness::hold_pushes_until(bare.path(), 2);
    let take = |r: &Repo, persona: &str| {
        crate::harness::Guarded::spawn(
            r.jules_cmd([
                "exchange",
                "take",
                "iss-ci",
                "--workstream",
                "generic",
                "--persona",
                persona,
                "--sync",
                "origin",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
        )
    };
    let (ta, tb) = (take(&a, "impl-a"), take(&b, "impl-b"));
    let hang = std::time::Duration::from_secs(300);
    let (oa, ob) = (ta.wait_output(hang), tb.wait_output(hang));
    assert!(
        crate::harness::pushes_held(&held) >= 2,
        "the takes did not meet at the remote"
    );
    let codes = [oa.status.code(), ob.status.code()];
    assert!(
        codes.contains(&Some(0)) && codes.contains(&Some(3)),
        "{codes:?} {} {}",
        stderr(&oa),
        stderr(&ob)
    );
    let winner = if oa.status.code() == Some(0) {
        "impl-a"
    } else {
        "impl-b"
    };
    let (w, l) = if winner == "impl-a" {
        (&a, &b)
    } else {
        (&b, &a)
    };
    assert!(
        stdout(if winner == "impl-a" { &ob } else { &oa }).contains(&format!("taken by {winner}"))
    );
    // The loser cannot close it; the winner does.
    let loser = if winner == "impl-a" {
        "impl-b"
    } else {
        "impl-a"
    };
    l.jules_ok(["sync"]);
    let out = l.jules([
        "exchange",
        "close",
        "iss-ci",
        "--workstream",
        "generic",
        "--persona",
        loser,
        "--commit",
        "abc",
    ]);
    assert_eq!(out.status.code(), Some(3));
    w.jules_ok([
        "exchange",
        "close",
        "iss-ci",
        "--workstream",
        "generic",
        "--persona",
        winner,
        "--commit",
        "feature/ci",
    ]);
    w.jules_ok(["sync"]);
    l.jules_ok(["sync"]);
    for r in [&a, &b] {
        let j: serde_json::Value =
            serde_json::from_str(&r.jules_ok(["--json", "exchange", "list"])).unwrap();
        let issue = j["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "iss-ci")
            .unwrap()
            .clone();
        assert_eq!(issue["state"], "closed");
        assert_eq!(issue["taken_by"], winner);
        assert_eq!(issue["closed_with"], "feature/ci");
    }

    // Export, import into a fresh repository, export again: byte for byte. A second import adds nothing.
    a.write(
        "ev3.yml",
        "id: ev-new\ntitle: t\nstatement: s\nevidence: []\n",
    );
    a.jules_ok([
        "exchange",
        "add",
        "--workstream",
        "generic",
        "--kind",
        "event",
        "--file",
        "ev3.yml",
    ]);
    a.write("idea.yml", "title: faster ci\nbody: cache deps\n");
    a.jules_ok([
        "exchange",
        "add",
        "--workstream",
        "generic",
        "--kind",
        "idea",
        "--persona",
        "visionary",
        "--file",
        "idea.yml",
    ]);
    let d1 = tempfile::tempdir().unwrap();
    let d1s = d1.path().to_str().unwrap();
    a.jules_ok(["exchange", "export", "--dir", d1s]);
    assert_eq!(
        std::fs::read_to_string(
            d1.path()
                .join("generic/exchange/events/decided/ev-flaky.yml")
        )
        .unwrap(),
        EVENT1
    );
    assert!(d1
        .path()
        .join("generic/exchange/events/pending/ev-new.yml")
        .is_file());
    assert!(d1
        .path()
        .join("generic/exchange/innovators/visionary/idea.yml")
        .is_file());
    let again = tempfile::tempdir().unwrap();
    a.jules_ok([
        "exchange",
        "export",
        "--dir",
        again.path().to_str().unwrap(),
    ]);
    assert_eq!(tree(d1.path()), tree(again.path()));

    let c = Repo::new();
    scaffold(&c);
    let first = c.jules_ok(["exchange", "import", "--dir", d1s]);
    assert!(first.contains("imported 4 artifact(s)"), "{first}");
    assert!(c
        .jules_ok(["exchange", "import", "--dir", d1s])
        .contains("imported 0 artifact(s)"));
    let d2 = tempfile::tempdir().unwrap();
    c.jules_ok(["exchange", "export", "--dir", d2.path().to_str().unwrap()]);
    assert_eq!(tree(d1.path()), tree(d2.path()));
}

fn tree(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn schema_validation_and_missing_workstream_write_nothing() {
    let r = Repo::new();
    scaffold(&r);
    r.write("ok.yml", EVENT1);
    r.jules_ok([
        "exchange",
        "add",
        "--workstream",
        "generic",
        "--kind",
        "event",
        "--file",
        "ok.yml",
    ]);
    let before = r.git(["rev-parse", "refs/jules/exchange"]);
    r.write("missing.yml", "id: ev-2\ntitle: t\nevidence: []\n");
    let out = r.jules([
        "exchange",
        "add",
        "--workstream",
        "generic",
        "--kind",
        "event",
        "--file",
        "missing.yml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("missing field statement"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    r.write(
        "invented.yml",
        "id: ev-3\ntitle: t\nstatement: s\nevidence: []\nseverity: high\n",
    );
    let out = r.jules([
        "exchange",
        "add",
        "--workstream",
        "generic",
        "--kind",
        "event",
        "--file",
        "invented.yml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown field severity"),
        "{}",
        stderr(&out)
    );
    let out = r.jules([
        "exchange",
        "add",
        "--workstream",
        "ops",
        "--kind",
        "event",
        "--file",
        "ok.yml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("workstream not found: ops"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("existing: generic"),
        "{}",
        stderr(&out)
    );
    // An issue whose source event does not exist, and a plan for an issue not marked for deep analysis.
    r.write("bad-issue.yml", "id: i1\ntitle: t\nlabel: bugs\nsource_events:\n  - ev-nope\nrequires_deep_analysis: false\n");
    let out = r.jules([
        "exchange",
        "decide",
        "--workstream",
        "generic",
        "--file",
        "bad-issue.yml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ev-nope"));
    assert_eq!(
        r.git(["rev-parse", "refs/jules/exchange"]),
        before,
        "nothing was written"
    );
    r.write("issue.yml", "id: i1\ntitle: t\nlabel: bugs\nsource_events:\n  - ev-flaky\nrequires_deep_analysis: false\n");
    r.jules_ok([
        "exchange",
        "decide",
        "--workstream",
        "generic",
        "--file",
        "issue.yml",
    ]);
    r.write("plan.yml", "steps: []\n");
    let out = r.jules([
        "exchange",
        "expand",
        "i1",
        "--workstream",
        "generic",
        "--file",
        "plan.yml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("requires_deep_analysis"));
}
