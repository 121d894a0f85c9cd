//! A layered tick (`[[layers]]` in .jules/schedules.toml): observers run in parallel, then deciders, then
//! the rest; each launched run's `git jules prompt` gets its layer, role and workstream.

use crate::harness::Repo;
use crate::prompt::scaffold;

fn tick(r: &Repo, launch: &str) -> serde_json::Value {
    serde_json::from_str(&r.jules_ok(["tick", "--json", "--launch", launch])).unwrap()
}

fn launched(report: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["persona"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn done(r: &Repo, persona: &str) {
    r.jules_ok(["state", "done", "--session", &format!("sess-{persona}")]);
}

#[test]
fn a_layered_tick_runs_observers_in_parallel_then_deciders_then_the_rest() {
    let r = Repo::new();
    scaffold(&r);
    r.write(
        ".jules/schedules.toml",
        "[[layers]]\nname = \"observers\"\nroles = [\"qa\", \"security\"]\nworkstream = \"generic\"\n\
         [[layers]]\nname = \"deciders\"\nroles = [\"triage\"]\nworkstream = \"generic\"\n\
         [[layers]]\nname = \"implementers\"\nroles = [\"builder\"]\n",
    );
    r.jules_ok(["sprint", "start"]);
    let out = tempfile::tempdir().unwrap();
    // The launcher renders the run's prompt (as a session would) and prints a session id.
    let launch = format!(
        "git-jules prompt \"$JULES_PERSONA\" > '{}'/\"$JULES_PERSONA\".txt; echo \"sess-$JULES_PERSONA\"",
        out.path().display()
    );
    let t1 = tick(&r, &launch);
    assert_eq!(t1["mode"], "layered");
    assert_eq!(launched(&t1), ["qa", "security"]);
    for role in ["qa", "security"] {
        let p = std::fs::read_to_string(out.path().join(format!("{role}.txt"))).unwrap();
        assert!(p.contains(&format!("## Role\n\nrole: {role}")), "{p}");
        assert!(
            p.contains("layer: observers") && p.contains("Workstream: generic"),
            "{p}"
        );
    }
    // Nothing more while an observer runs.
    done(&r, "qa");
    let t2 = tick(&r, &launch);
    assert_eq!(launched(&t2), Vec::<String>::new());
    assert_eq!(t2["waiting"][0]["persona"], "security");
    done(&r, "security");
    let t3 = tick(&r, &launch);
    assert_eq!(launched(&t3), ["triage"]);
    let p = std::fs::read_to_string(out.path().join("triage.txt")).unwrap();
    assert!(
        p.contains("role: triage") && p.contains("layer: deciders"),
        "{p}"
    );
    assert_eq!(launched(&tick(&r, &launch)), Vec::<String>::new());
    done(&r, "triage");
    let t5 = tick(&r, &launch);
    assert_eq!(launched(&t5), ["builder"]);
    let p = std::fs::read_to_string(out.path().join("builder.txt")).unwrap();
    assert!(
        p.contains("## Layer Contracts\n\nlayer: implementers"),
        "{p}"
    );
    done(&r, "builder");
    // Every layer is done this sprint: nothing to launch until the next one.
    assert_eq!(launched(&tick(&r, &launch)), Vec::<String>::new());
}
