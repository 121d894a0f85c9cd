//! `git jules prompt`: seed-004 persona templates and seed-001 layered `prompt_assembly.j2`, rendered by
//! minijinja, with includes, runtime variables and state context.

use crate::harness::{stderr, stdout, Repo};

/// The layered roles of seed 001 and their assembly templates.
const LAYERS: &[(&str, &str)] = &[
    (
        "narrator",
        "{{ section(\"Layer Contracts\", include_required(\".jules/roles/narrator/contracts.yml\")) }}\n\
         Narrator for {{ persona }}.\n",
    ),
    (
        "observers",
        "{{ section(\"Role\", include_required(\".jules/roles/observers/roles/\" ~ role ~ \"/role.yml\")) }}\n\
         {{ section(\"Layer Contracts\", include_required(\".jules/roles/observers/contracts.yml\")) }}\n\
         {{ section(\"Change Summary\", include_optional(\".jules/changes/latest.yml\")) }}\n\
         Workstream: {{ workstream }}\n",
    ),
    (
        "deciders",
        "{{ section(\"Role\", include_required(\".jules/roles/deciders/roles/\" ~ role ~ \"/role.yml\")) }}\n\
         {{ section(\"Layer Contracts\", include_required(\".jules/roles/deciders/contracts.yml\")) }}\n\
         Workstream: {{ workstream }}\n",
    ),
    (
        "planners",
        "{{ section(\"Layer Contracts\", include_required(\".jules/roles/planners/contracts.yml\")) }}\n",
    ),
    (
        "implementers",
        "{{ section(\"Layer Contracts\", include_required(\".jules/roles/implementers/contracts.yml\")) }}\n",
    ),
    (
        "innovators",
        "{{ section(\"Persona\", include_required(\".jules/roles/innovators/roles/\" ~ role ~ \"/role.yml\")) }}\n\
         {{ section(\"Phase Contracts\", include_required(\".jules/roles/innovators/contracts_\" ~ phase ~ \".yml\")) }}\n\
         Phase: {{ phase }}\n",
    ),
];

/// Lay out seed 001's `.jules/` tree (two observer roles, one decider role, one innovator persona, a
/// workstream `generic`) and a seed-004 persona template.
pub fn scaffold(r: &Repo) {
    r.write(".jules/JULES.md", "# Agent contract\n");
    r.write(".jules/README.md", "# Guide\n");
    r.write(".jules/config.toml", "[workspace]\n");
    r.write(".jules/changes/.gitkeep", "");
    for (layer, tmpl) in LAYERS {
        r.write(&format!(".jules/roles/{layer}/prompt_assembly.j2"), tmpl);
        if *layer != "innovators" {
            r.write(
                &format!(".jules/roles/{layer}/contracts.yml"),
                &format!("layer: {layer}\nrules:\n  - {layer} rule\n"),
            );
        }
    }
    r.write(
        ".jules/roles/narrator/schemas/change.yml",
        "summary: \"\"\nchanges: []\n",
    );
    r.write(
        ".jules/roles/observers/schemas/event.yml",
        "id: \"\"\ntitle: \"\"\nstatement: \"\"\nevidence: []\n",
    );
    r.write(
        ".jules/roles/observers/schemas/perspective.yml",
        "role: \"\"\nfocus: []\n",
    );
    for role in ["qa", "security"] {
        r.write(
            &format!(".jules/roles/observers/roles/{role}/role.yml"),
            &format!("role: {role}\nfocus: {role} findings\n"),
        );
    }
    r.write(".jules/roles/observers/roles/.gitkeep", "");
    r.write(
        ".jules/roles/deciders/schemas/issue.yml",
        "id: \"\"\ntitle: \"\"\nlabel: \"\"\nsource_events: []\nrequires_deep_analysis: false\n",
    );
    r.write(
        ".jules/roles/deciders/roles/triage/role.yml",
        "role: triage\n",
    );
    r.write(".jules/roles/deciders/roles/.gitkeep", "");
    r.write(
        ".jules/roles/innovators/contracts_creation.yml",
        "phase: creation\n",
    );
    r.write(
        ".jules/roles/innovators/contracts_refinement.yml",
        "phase: refinement\n",
    );
    for s in ["perspective", "idea", "proposal", "comment"] {
        r.write(
            &format!(".jules/roles/innovators/schemas/{s}.yml"),
            "title: \"\"\nbody: \"\"\n",
        );
    }
    r.write(
        ".jules/roles/innovators/roles/visionary/role.yml",
        "persona: visionary\n",
    );
    r.write(".jules/roles/innovators/roles/.gitkeep", "");
    for d in [
        "exchange/events/pending",
        "exchange/events/decided",
        "exchange/issues",
    ] {
        r.write(&format!(".jules/workstreams/generic/{d}/.gitkeep"), "");
    }
    r.write(
        ".jules/personas/curator/prompt.md.j2",
        "You are {{ persona }}, sprint {{ sprint }}.\n\
         {% for t in tasks %}- task: {{ t.title }}\n{% endfor %}\
         {% if last_run %}last run: {{ last_run.session_id }}\n{% endif %}\
         Mood: {{ mood }}\n",
    );
    r.write(
        ".jules/personas/plain/prompt.md",
        "Plain prompt for {{ persona }}.\n",
    );
}

#[test]
fn seed_004_persona_template_sees_state_mail_and_vars() {
    let r = Repo::new();
    scaffold(&r);
    r.jules_ok(["sprint", "start"]);
    r.jules_ok(["task", "add", "write the docs", "--persona", "curator"]);
    r.jules_ok([
        "state",
        "record",
        "--persona",
        "curator",
        "--session",
        "sess-41",
    ]);
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "weaver",
        "--to",
        "curator",
        "--subject",
        "conflict here",
        "--body",
        "x",
    ]);
    let text = r.jules_ok(["prompt", "curator", "--var", "mood=calm"]);
    assert!(text.starts_with("## Mailbox Check (IMPORTANT)"), "{text}");
    assert!(text.contains("You have 1 unread message(s)"), "{text}");
    assert!(text.contains("conflict here"), "{text}");
    let body = text.split("## Your Work\n").nth(1).unwrap();
    assert!(body.contains("You are curator, sprint 1."), "{body}");
    assert!(body.contains("- task: write the docs"), "{body}");
    assert!(body.contains("last run: sess-41"), "{body}");
    assert!(body.contains("Mood: calm"), "{body}");

    // A plain prompt.md is a template too.
    let plain = r.jules_ok(["prompt", "plain"]);
    assert!(plain.ends_with("Plain prompt for plain.\n"), "{plain}");
    // No template: the preamble alone, as before.
    let none = r.jules_ok(["prompt", "nobody"]);
    assert!(none.trim_end().ends_with("## Your Work"), "{none}");

    let json: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "prompt", "curator"])).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["template"], ".jules/personas/curator/prompt.md.j2");
    assert_eq!(json["unread"].as_array().unwrap().len(), 1);
    assert_eq!(json["unread"][0]["subject"], "conflict here");
    assert!(json["text"].as_str().unwrap().contains("You are curator"));
}

#[test]
fn seed_001_layers_render_with_includes_and_runtime_variables() {
    let r = Repo::new();
    scaffold(&r);
    r.write(".jules/changes/latest.yml", "summary: three commits\n");
    for role in ["qa", "security"] {
        let out = r.jules_ok([
            "--json",
            "prompt",
            role,
            "--layer",
            "observers",
            "--role",
            role,
            "--workstream",
            "generic",
        ]);
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        let text = j["text"].as_str().unwrap();
        assert!(text.starts_with("## Mailbox Check"), "{text}");
        assert!(
            text.contains(&format!("## Role\n\nrole: {role}\nfocus: {role} findings")),
            "{text}"
        );
        assert!(
            text.contains("## Layer Contracts\n\nlayer: observers"),
            "{text}"
        );
        assert!(
            text.contains("## Change Summary\n\nsummary: three commits"),
            "{text}"
        );
        assert!(text.contains("Workstream: generic"), "{text}");
        assert_eq!(
            j["included"],
            serde_json::json!([
                format!(".jules/roles/observers/roles/{role}/role.yml"),
                ".jules/roles/observers/contracts.yml",
                ".jules/changes/latest.yml"
            ])
        );
    }
    // The role's layer is found from the persona's name when no --layer is given.
    let triage = r.jules_ok(["prompt", "triage", "--workstream", "generic"]);
    assert!(triage.contains("## Role\n\nrole: triage"), "{triage}");
    assert!(triage.contains("layer: deciders"), "{triage}");
    // An optional include that is missing renders as nothing (its section vanishes).
    std::fs::remove_file(r.path().join(".jules/changes/latest.yml")).unwrap();
    let qa = r.jules_ok([
        "prompt",
        "qa",
        "--layer",
        "observers",
        "--role",
        "qa",
        "--workstream",
        "generic",
    ]);
    assert!(!qa.contains("Change Summary"), "{qa}");
    for layer in ["narrator", "planners", "implementers"] {
        let t = r.jules_ok(["prompt", "someone", "--layer", layer]);
        assert!(
            t.contains(&format!("## Layer Contracts\n\nlayer: {layer}")),
            "{t}"
        );
    }
    for phase in ["creation", "refinement"] {
        let t = r.jules_ok([
            "prompt",
            "visionary",
            "--layer",
            "innovators",
            "--phase",
            phase,
        ]);
        assert!(t.contains("## Persona\n\npersona: visionary"), "{t}");
        assert!(
            t.contains(&format!("## Phase Contracts\n\nphase: {phase}")),
            "{t}"
        );
        assert!(t.contains(&format!("Phase: {phase}")), "{t}");
    }
    // Launched runs pass their layer, role and workstream through the environment.
    let out = r
        .jules_cmd(["prompt", "qa"])
        .env("JULES_LAYER", "observers")
        .env("JULES_ROLE", "security")
        .env("JULES_WORKSTREAM", "generic")
        .output()
        .unwrap();
    assert!(stdout(&out).contains("role: security"), "{}", stderr(&out));
}

#[test]
fn missing_required_include_and_missing_workstream_fail_with_exit_2_and_print_nothing() {
    let r = Repo::new();
    scaffold(&r);
    std::fs::remove_file(r.path().join(".jules/roles/observers/contracts.yml")).unwrap();
    let out = r.jules([
        "prompt",
        "qa",
        "--layer",
        "observers",
        "--role",
        "qa",
        "--workstream",
        "generic",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains(".jules/roles/observers/contracts.yml"),
        "{err}"
    );
    assert!(
        err.contains(".jules/roles/observers/prompt_assembly.j2 line 2"),
        "{err}"
    );

    let out = r.jules([
        "prompt",
        "qa",
        "--layer",
        "deciders",
        "--role",
        "triage",
        "--workstream",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(err.contains("workstream not found: nope"), "{err}");
    assert!(err.contains("existing: generic"), "{err}");

    let out = r.jules([
        "prompt",
        "visionary",
        "--layer",
        "innovators",
        "--phase",
        "dreaming",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("creation or refinement"));
    let out = r.jules(["prompt", "qa", "--var", "novalue"]);
    assert_eq!(out.status.code(), Some(2));
}
