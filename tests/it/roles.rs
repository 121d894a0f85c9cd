//! `git jules roles`: the seed-001 scaffold listed and checked.

use crate::harness::{stdout, Repo};
use crate::prompt::scaffold;

#[test]
fn roles_lists_the_seed_001_tree_and_check_accepts_it() {
    let r = Repo::new();
    scaffold(&r);
    let text = r.jules_ok(["roles"]);
    assert!(
        text.contains("layer observers     roles: qa, security"),
        "{text}"
    );
    assert!(
        text.contains("layer innovators    roles: visionary"),
        "{text}"
    );
    assert!(text.contains("personas: curator, plain"), "{text}");
    let j: serde_json::Value = serde_json::from_str(&r.jules_ok(["--json", "roles"])).unwrap();
    assert_eq!(j["version"], 1);
    let names: Vec<&str> = j["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "narrator",
            "observers",
            "deciders",
            "planners",
            "implementers",
            "innovators"
        ]
    );
    assert_eq!(r.jules_ok(["roles", "--check"]).trim(), "scaffold ok");
}

#[test]
fn roles_check_names_each_problem() {
    let r = Repo::new();
    scaffold(&r);
    std::fs::remove_file(r.path().join(".jules/roles/planners/prompt_assembly.j2")).unwrap();
    std::fs::remove_file(r.path().join(".jules/roles/observers/roles/qa/role.yml")).unwrap();
    r.write(
        ".jules/roles/deciders/contracts.yml",
        "outputs:\n  - schemas/verdict.yml\n",
    );
    r.write(
        ".jules/roles/narrator/prompt_assembly.j2",
        "{{ include_required(\"nope.yml\") }}\n",
    );
    let out = r.jules(["roles", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains(".jules/roles/planners/prompt_assembly.j2: missing"),
        "{text}"
    );
    // qa's role.yml is gone: both the missing file and the failing render are named.
    assert!(
        text.contains(".jules/roles/observers/roles/qa/role.yml: missing"),
        "{text}"
    );
    assert!(text.contains("references schemas/verdict.yml"), "{text}");
    assert!(
        text.contains(".jules/roles/narrator/prompt_assembly.j2: does not render"),
        "{text}"
    );
    assert!(text.contains("nope.yml"), "{text}");
}
