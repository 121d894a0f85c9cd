//! The demo's first act: a parallel sprint of 23 personas, the weaver, the conflicts mailed and fixed.

use std::path::Path;

use anyhow::{bail, ensure, Context as _};

use super::{commit_file, config_file, step, Demo, OVERLAPPING, PERSONAS, SPRINT_BRANCH_SUFFIX};
use crate::frontends::context::Context;

/// The parallel sprint: returns the number of ticks that launched something.
pub(super) fn sprint(ctx: &Context, demo: &Demo) -> anyhow::Result<usize> {
    let mut s = Sprint {
        project: setup(ctx, demo)?,
        ticks: 0,
    };
    launch_everyone(ctx, demo, &mut s)?;
    let conflicted = weave_first(ctx, demo, &mut s)?;
    rerun_conflicted(ctx, demo, &mut s, conflicted)?;
    weave_again(ctx, demo, &mut s)?;
    complete(ctx, demo, &mut s)?;
    Ok(s.ticks)
}

/// What the steps share: the scheduler's clone and the ticks used so far.
struct Sprint {
    project: std::path::PathBuf,
    ticks: usize,
}

impl Sprint {
    /// `git jules tick`: its plan, counting the ticks that launched something.
    fn tick(&mut self, demo: &Demo) -> anyhow::Result<serde_json::Value> {
        let plan = demo.json(&self.project, "scheduler", &["tick"])?;
        if !plan["decisions"].as_array().is_none_or(|d| d.is_empty()) {
            self.ticks += 1;
        }
        Ok(plan)
    }
}

fn personas_of(doc: &serde_json::Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["persona"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Step 1: a bare remote, the project with its schedules, `init`, `sprint start`.
fn setup(ctx: &Context, demo: &Demo) -> anyhow::Result<std::path::PathBuf> {
    let root = &demo.root;
    step(
        ctx,
        1,
        "a bare remote, the project, and the scheduler's clone",
    );
    demo.git(root, &["init", "-q", "--bare", "-b", "main", "remote.git"])?;
    demo.git(root, &["clone", "-q", "remote.git", "project"])?;
    let project = root.join("project");
    for (k, v) in [
        ("user.name", "scheduler"),
        ("user.email", "scheduler@jules.invalid"),
    ] {
        demo.git(&project, &["config", k, v])?;
    }
    demo.git(&project, &["checkout", "-q", "-b", "main"])?;
    let order = PERSONAS
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::create_dir_all(project.join(".jules"))?;
    std::fs::write(
        project.join(".jules/schedules.toml"),
        format!("[cycle]\norder = [{order}]\n[parallel]\nalways = true\nweaver = \"weaver\"\n[groups]\nleads = [\"curator\"]\n[alerts]\ngroup = \"leads\"\n"),
    )?;
    commit_file(
        demo,
        &project,
        "scheduler",
        "src/config.txt",
        &config_file("setting10 = default"),
        "initial project",
    )?;
    demo.git(&project, &["push", "-q", "origin", "main"])?;
    demo.jules(&project, "scheduler", &["init"])?;
    demo.line(format!(
        "{} personas in one parallel sprint; the weaver integrates",
        PERSONAS.len()
    ));
    demo.jules(&project, "scheduler", &["sprint", "start"])?;
    Ok(project)
}

/// Step 2: one tick launches every persona; each commits on its branch and reports done.
fn launch_everyone(ctx: &Context, demo: &Demo, s: &mut Sprint) -> anyhow::Result<()> {
    step(ctx, 2, "tick: the scheduler launches every persona at once");
    let plan = s.tick(demo)?;
    let decisions = personas_of(&plan, "decisions");
    let runs = run_ids(demo, &s.project)?;
    demo.line(format!("launched {} sessions", decisions.len()));
    ensure!(
        decisions.len() == PERSONAS.len(),
        "expected every persona to be launched: {plan}"
    );
    let session = |persona: &str| -> anyhow::Result<()> {
        persona_work(demo, &s.project, persona, None)?;
        demo.jules(
            &s.project,
            persona,
            &["state", "done", "--session", &runs[persona]],
        )?;
        Ok(())
    };
    session(&decisions[0])?;
    demo.quietly("personas", || {
        for p in &decisions[1..] {
            session(p)?;
        }
        Ok(((), decisions.len() - 1))
    })?;
    demo.line(format!(
        "each committed its change on jules/<persona>/{SPRINT_BRANCH_SUFFIX}; {} of them changed the same lines of src/config.txt",
        OVERLAPPING.len()
    ));
    Ok(())
}

/// Step 3: the weaver integrates what applies and mails each conflict to its author.
fn weave_first(ctx: &Context, demo: &Demo, s: &mut Sprint) -> anyhow::Result<Vec<String>> {
    step(ctx, 3, "tick: everyone is done, the weaver integrates");
    let plan = s.tick(demo)?;
    let report = weaver_turn(demo, &s.project, &plan)?;
    let conflicted = personas_of(&report, "conflicted");
    demo.line(format!(
        "woven: {} applied, {} conflicted ({}); each author got mail",
        report["applied"].as_array().map_or(0, |a| a.len()),
        conflicted.len(),
        conflicted.join(", ")
    ));
    Ok(conflicted)
}

/// Step 4: only the personas with conflict mail run again; each reads it, rebases and resubmits.
fn rerun_conflicted(
    ctx: &Context,
    demo: &Demo,
    s: &mut Sprint,
    conflicted: Vec<String>,
) -> anyhow::Result<()> {
    step(
        ctx,
        4,
        "tick: only the personas with conflict mail run again",
    );
    let plan = s.tick(demo)?;
    let again = personas_of(&plan, "decisions");
    let mut expected = conflicted;
    expected.sort();
    let mut got = again.clone();
    got.sort();
    ensure!(
        got == expected,
        "expected {expected:?} to run again, got {got:?}"
    );
    let runs = run_ids(demo, &s.project)?;
    for p in &again {
        let inbox = demo.json(
            &s.project,
            p,
            &["mail", "inbox", "--persona", p, "--unread"],
        )?;
        let first = inbox["messages"]
            .as_array()
            .and_then(|a| a.first())
            .context("an unread message")?;
        let id = first["id"].as_str().context("message id")?.to_owned();
        let subject = first["subject"].as_str().unwrap_or_default().to_owned();
        demo.jules(&s.project, p, &["mail", "read", &id, "--persona", p])?;
        demo.line(format!(
            "{p} reads \"{subject}\", rebases onto the integration branch and resubmits"
        ));
        persona_work(demo, &s.project, p, Some(&integration_branch()))?;
        demo.jules(
            &s.project,
            p,
            &["state", "done", "--session", &runs[p.as_str()]],
        )?;
    }
    Ok(())
}

/// Step 5: the weaver integrates the fixes; nothing conflicts.
fn weave_again(ctx: &Context, demo: &Demo, s: &mut Sprint) -> anyhow::Result<()> {
    step(ctx, 5, "tick: the weaver integrates again");
    let plan = s.tick(demo)?;
    let report = weaver_turn(demo, &s.project, &plan)?;
    let applied = report["applied"].as_array().map_or(0, |a| a.len());
    let left = report["conflicted"].as_array().map_or(0, |a| a.len());
    ensure!(left == 0, "conflicts left after the fixes: {report}");
    demo.line(format!("woven: {applied} applied, none conflicted"));
    Ok(())
}

/// Step 6: the sprint is complete; close it, count it, sync it.
fn complete(ctx: &Context, demo: &Demo, s: &mut Sprint) -> anyhow::Result<()> {
    step(ctx, 6, "tick: nothing left to do, the sprint is complete");
    let plan = s.tick(demo)?;
    ensure!(
        plan["complete"] == true,
        "expected the sprint to be complete: {plan}"
    );
    demo.jules(&s.project, "scheduler", &["sprint", "close"])?;
    let stats = demo.json(&s.project, "scheduler", &["sprint", "stats"])?;
    let first = &stats["items"][0];
    demo.line(format!(
        "sprint 1: {} ticks, {} runs, {} re-runs, conflict rate {:.2}",
        first["ticks_used"],
        first["runs"],
        first["reruns"],
        first["conflict_rate"].as_f64().unwrap_or(0.0)
    ));
    demo.jules(&s.project, "scheduler", &["sync"])?;
    Ok(())
}

fn integration_branch() -> String {
    "jules/integration/sprint-1".into()
}

/// Session ids of the running runs, by persona (the scheduler recorded them without a launcher, so the
/// run id is the handle).
fn run_ids(
    demo: &Demo,
    project: &Path,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let status = demo.json(project, "scheduler", &["sprint", "status"])?;
    let mut out = std::collections::BTreeMap::new();
    for r in status["runs"].as_array().context("runs")? {
        if r["status"] == "running" {
            out.insert(
                r["persona_id"].as_str().context("persona")?.to_owned(),
                r["id"].as_str().context("id")?.to_owned(),
            );
        }
    }
    Ok(out)
}

/// A persona's session: a branch with one change, from `onto` (default: main).
fn persona_work(
    demo: &Demo,
    project: &Path,
    persona: &str,
    onto: Option<&str>,
) -> anyhow::Result<()> {
    let branch = format!("jules/{persona}/{SPRINT_BRANCH_SUFFIX}");
    demo.git(
        project,
        &["checkout", "-q", "-B", &branch, onto.unwrap_or("main")],
    )?;
    if let Some(i) = OVERLAPPING.iter().position(|p| *p == persona) {
        // The same line for all three; after a rebase, the fix keeps curator's value and adds one's own.
        let text = if onto.is_some() {
            let current = std::fs::read_to_string(project.join("src/config.txt"))?;
            current.replacen(
                &format!("setting{} = default", 10 + 8 * i),
                &format!("setting{} = {persona}", 10 + 8 * i),
                1,
            )
        } else {
            config_file(&format!("setting10 = {persona}"))
        };
        commit_file(
            demo,
            project,
            persona,
            "src/config.txt",
            &text,
            &format!("{persona}: tune setting10"),
        )?;
    } else {
        commit_file(
            demo,
            project,
            persona,
            &format!("docs/{persona}.md"),
            &format!("# {persona}\n\nNotes from {persona}'s session.\n"),
            &format!("{persona}: add notes"),
        )?;
    }
    demo.git(project, &["checkout", "-q", "main"])?;
    Ok(())
}

/// The weaver's session: the tick must have launched it; it weaves every persona branch and reports done.
fn weaver_turn(
    demo: &Demo,
    project: &Path,
    plan: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    ensure!(
        plan["decisions"][0]["persona"] == "weaver",
        "expected the weaver: {plan}"
    );
    let report = weave(demo, project)?;
    let runs = run_ids(demo, project)?;
    demo.jules(
        project,
        "weaver",
        &["state", "done", "--session", &runs["weaver"]],
    )?;
    Ok(report)
}

fn weave(demo: &Demo, project: &Path) -> anyhow::Result<serde_json::Value> {
    let glob = format!("jules/*/{SPRINT_BRANCH_SUFFIX}");
    let (code, out, err) =
        demo.jules_status(project, "weaver", &["weave", "--branches", &glob, "--json"])?;
    if code != 0 && code != 1 {
        bail!("git jules weave failed ({code}): {err}");
    }
    serde_json::from_str(&out).context("parsing the weave report")
}
