//! `git jules demo`: the whole mission, self-contained in a temporary directory, printing each step.
//!
//! 23 scripted personas work in parallel on one repository (three of them on the same lines), the scheduler
//! ticks, the weaver integrates what applies and mails each conflict to its author, the conflicted personas
//! read their mail, rebase and resubmit, the weaver integrates again and the sprint completes; then a 3-patch
//! staging series is verified (the broken patch is found), rerolled, verified again and finalized. Everything
//! goes through the real `git jules` commands, as a persona's sandbox would run them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, ensure, Context as _};

use super::{ui, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the temporary directory and print its path
    #[arg(long)]
    pub keep: bool,
    /// Print every git jules command the demo runs
    #[arg(long, short)]
    pub verbose: bool,
}

const PERSONAS: [&str; 23] = [
    "curator",
    "refactor",
    "visionary",
    "scribe",
    "janitor",
    "sentinel",
    "artisan",
    "builder",
    "shepherd",
    "sage",
    "forge",
    "bolt",
    "palette",
    "hawk",
    "oracle",
    "pilot",
    "tuner",
    "warden",
    "keeper",
    "lens",
    "quill",
    "mender",
    "scout",
];
/// The personas that edit the same lines of `src/config.txt`: the first applies, the others conflict.
const OVERLAPPING: [&str; 3] = ["curator", "refactor", "visionary"];
const SPRINT_BRANCH_SUFFIX: &str = "sprint-1";

struct Demo {
    exe: PathBuf,
    root: PathBuf,
    verbose: bool,
    started: Instant,
}

impl Demo {
    /// Run `git-jules ARGS` in `dir` as `persona`; return stdout, fail with stderr.
    fn jules(&self, dir: &Path, persona: &str, args: &[&str]) -> anyhow::Result<String> {
        let (code, out, err) = self.jules_status(dir, persona, args)?;
        ensure!(
            code == 0,
            "`git jules {}` failed ({code}): {err}",
            args.join(" ")
        );
        Ok(out)
    }

    fn jules_status(
        &self,
        dir: &Path,
        persona: &str,
        args: &[&str],
    ) -> anyhow::Result<(i32, String, String)> {
        if self.verbose {
            ui::status(format!(
                "    $ JULES_PERSONA={persona} git jules {}",
                args.join(" ")
            ));
        }
        let out = Command::new(&self.exe)
            .args(args)
            .current_dir(dir)
            .env("JULES_PERSONA", persona)
            .env("NO_COLOR", "1")
            .output()
            .with_context(|| format!("running git jules {}", args.join(" ")))?;
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    fn git(&self, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
        let out = git_jules::gitcli::run(dir, args)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn json(&self, dir: &Path, persona: &str, args: &[&str]) -> anyhow::Result<serde_json::Value> {
        let mut all = args.to_vec();
        all.push("--json");
        let text = self.jules(dir, persona, &all)?;
        serde_json::from_str(&text)
            .with_context(|| format!("parsing the JSON of git jules {}", args.join(" ")))
    }
}

fn step(ctx: &Context, n: u32, text: &str) {
    ui::out(format!("{} {text}", ctx.ui.bold(&format!("[{n}]"))));
}

fn line(text: impl AsRef<str>) {
    ui::out(format!("    {}", text.as_ref()));
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let tmp = tempfile::Builder::new()
        .prefix("git-jules-demo-")
        .tempdir()?;
    let demo = Demo {
        exe: std::env::current_exe().context("locating the git-jules binary")?,
        root: tmp.path().to_owned(),
        verbose: args.verbose,
        started: Instant::now(),
    };
    let result = sprint(ctx, &demo).and_then(|ticks| series(ctx, &demo).map(|_| ticks));
    let ticks = match result {
        Ok(t) => t,
        Err(e) => {
            if args.keep {
                let kept = tmp.keep();
                ui::status(format!("kept {}", kept.display()));
            }
            return Err(e);
        }
    };
    ui::out(format!(
        "{} the sprint took {ticks} ticks for {} personas, against {} for a sequential cycle; all done in {:.1} s",
        ctx.ui.bold("[done]"),
        PERSONAS.len(),
        PERSONAS.len(),
        demo.started.elapsed().as_secs_f64()
    ));
    if args.keep {
        let kept = tmp.keep();
        ui::out(format!("kept {}", kept.display()));
    }
    Ok(0)
}

/// Write `path` in `dir` and commit it on the current branch as `persona`.
fn commit_file(
    demo: &Demo,
    dir: &Path,
    persona: &str,
    path: &str,
    content: &str,
    msg: &str,
) -> anyhow::Result<()> {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().expect("a file in a directory"))?;
    std::fs::write(full, content)?;
    demo.git(dir, &["add", "-A"])?;
    let author = format!("user.name={persona}");
    let email = format!("user.email={persona}@jules.invalid");
    demo.git(dir, &["-c", &author, "-c", &email, "commit", "-qm", msg])?;
    Ok(())
}

fn config_file(line10: &str) -> String {
    (1..=30)
        .map(|i| {
            if i == 10 {
                format!("{line10}\n")
            } else {
                format!("setting{i} = default\n")
            }
        })
        .collect()
}

/// The parallel sprint: returns the number of ticks that launched something.
fn sprint(ctx: &Context, demo: &Demo) -> anyhow::Result<usize> {
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
    line(format!(
        "{} personas in one parallel sprint; the weaver integrates",
        PERSONAS.len()
    ));
    demo.jules(&project, "scheduler", &["sprint", "start"])?;

    let mut ticks = 0;
    let mut tick = |demo: &Demo| -> anyhow::Result<serde_json::Value> {
        let plan = demo.json(&project, "scheduler", &["tick"])?;
        if !plan["decisions"].as_array().is_none_or(|d| d.is_empty()) {
            ticks += 1;
        }
        Ok(plan)
    };

    step(ctx, 2, "tick: the scheduler launches every persona at once");
    let plan = tick(demo)?;
    let decisions = plan["decisions"]
        .as_array()
        .context("a plan has decisions")?
        .clone();
    let runs = run_ids(demo, &project)?;
    line(format!("launched {} sessions", decisions.len()));
    ensure!(
        decisions.len() == PERSONAS.len(),
        "expected every persona to be launched: {plan}"
    );
    for d in &decisions {
        let persona = d["persona"].as_str().context("persona")?;
        persona_work(demo, &project, persona, None)?;
        demo.jules(
            &project,
            persona,
            &["state", "done", "--session", &runs[persona]],
        )?;
    }
    line(format!(
        "each committed its change on jules/<persona>/{SPRINT_BRANCH_SUFFIX}; {} of them changed the same lines of src/config.txt",
        OVERLAPPING.len()
    ));

    step(ctx, 3, "tick: everyone is done, the weaver integrates");
    let plan = tick(demo)?;
    let report = weaver_turn(demo, &project, &plan)?;
    let conflicted: Vec<String> = report["conflicted"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["persona"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    line(format!(
        "woven: {} applied, {} conflicted ({}); each author got mail",
        report["applied"].as_array().map_or(0, |a| a.len()),
        conflicted.len(),
        conflicted.join(", ")
    ));

    step(
        ctx,
        4,
        "tick: only the personas with conflict mail run again",
    );
    let plan = tick(demo)?;
    let again: Vec<String> = plan["decisions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["persona"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut expected = conflicted.clone();
    expected.sort();
    let mut got = again.clone();
    got.sort();
    ensure!(
        got == expected,
        "expected {expected:?} to run again, got {got:?}"
    );
    let runs = run_ids(demo, &project)?;
    for p in &again {
        let inbox = demo.json(&project, p, &["mail", "inbox", "--persona", p, "--unread"])?;
        let first = inbox["messages"]
            .as_array()
            .and_then(|a| a.first())
            .context("an unread message")?;
        let id = first["id"].as_str().context("message id")?.to_owned();
        let subject = first["subject"].as_str().unwrap_or_default().to_owned();
        demo.jules(&project, p, &["mail", "read", &id, "--persona", p])?;
        line(format!(
            "{p} reads \"{subject}\", rebases onto the integration branch and resubmits"
        ));
        persona_work(demo, &project, p, Some(&integration_branch()))?;
        demo.jules(
            &project,
            p,
            &["state", "done", "--session", &runs[p.as_str()]],
        )?;
    }

    step(ctx, 5, "tick: the weaver integrates again");
    let plan = tick(demo)?;
    let report = weaver_turn(demo, &project, &plan)?;
    let applied = report["applied"].as_array().map_or(0, |a| a.len());
    let left = report["conflicted"].as_array().map_or(0, |a| a.len());
    ensure!(left == 0, "conflicts left after the fixes: {report}");
    line(format!("woven: {applied} applied, none conflicted"));

    step(ctx, 6, "tick: nothing left to do, the sprint is complete");
    let plan = tick(demo)?;
    ensure!(
        plan["complete"] == true,
        "expected the sprint to be complete: {plan}"
    );
    demo.jules(&project, "scheduler", &["sprint", "close"])?;
    let stats = demo.json(&project, "scheduler", &["sprint", "stats"])?;
    line(format!(
        "sprint 1: {} ticks, {} runs, {} re-runs, conflict rate {:.2}",
        stats["items"][0]["ticks_used"],
        stats["items"][0]["runs"],
        stats["items"][0]["reruns"],
        stats["items"][0]["conflict_rate"].as_f64().unwrap_or(0.0)
    ));
    demo.jules(&project, "scheduler", &["sync"])?;
    Ok(ticks)
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

/// The staging series: verify finds the broken patch, reroll fixes it, verify passes, finalize merges.
fn series(ctx: &Context, demo: &Demo) -> anyhow::Result<()> {
    let project = demo.root.join("project");
    step(ctx, 7, "a 3-patch staging series; patch 2 breaks the check");
    demo.git(&project, &["checkout", "-q", "main"])?;
    let check = project.join("check.sh");
    std::fs::write(&check, "#!/bin/sh\n! grep -rq BROKEN src\n")?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755))?;
    }
    commit_file(
        demo,
        &project,
        "patcher",
        "check.sh",
        "#!/bin/sh\n! grep -rq BROKEN src\n",
        "add the check",
    )?;
    demo.jules(&project, "patcher", &["series", "start", "feature"])?;
    let patches = [
        (
            "src/feature.txt",
            "feature = on\n",
            "Add the feature flag",
            "The feature needs a switch.",
        ),
        (
            "src/helper.txt",
            "helper = BROKEN\n",
            "Add the helper",
            "The feature calls a helper.",
        ),
        (
            "docs/feature.md",
            "# Feature\n",
            "Document the feature",
            "Users need to know.",
        ),
    ];
    for (path, content, summary, rationale) in patches {
        let full = project.join(path);
        std::fs::create_dir_all(full.parent().expect("parent"))?;
        std::fs::write(full, content)?;
        demo.jules(
            &project,
            "patcher",
            &[
                "series",
                "commit",
                "--summary",
                summary,
                "--rationale",
                rationale,
            ],
        )?;
    }
    let (code, out, _) = demo.jules_status(
        &project,
        "patcher",
        &["verify", "--cmd", "./check.sh", "--json"],
    )?;
    ensure!(code == 1, "verify should fail on patch 2");
    let report: serde_json::Value = serde_json::from_str(&out)?;
    line(format!("verify: {}", first_failure(&report)));

    step(
        ctx,
        8,
        "fix the working tree, reroll it into patch 2, verify again, finalize",
    );
    std::fs::write(project.join("src/helper.txt"), "helper = fixed\n")?;
    demo.jules(&project, "patcher", &["series", "reroll", "2"])?;
    let report = demo.json(&project, "patcher", &["verify", "--cmd", "./check.sh"])?;
    line(format!(
        "verify after the reroll: {}",
        first_failure(&report)
    ));
    demo.jules(
        &project,
        "patcher",
        &["series", "finalize", "--cmd", "./check.sh"],
    )?;
    let log = demo.git(&project, &["log", "--format=%s", "-3", "main"])?;
    line(format!(
        "main now ends with: {}",
        log.lines().collect::<Vec<_>>().join(" | ")
    ));
    Ok(())
}

fn first_failure(report: &serde_json::Value) -> String {
    let commits = report["commits"].as_array().cloned().unwrap_or_default();
    match commits.iter().find(|c| c["result"] == "fail") {
        Some(c) => format!(
            "patch {} ({}) fails",
            c["index"],
            c["summary"].as_str().unwrap_or("")
        ),
        None => format!("all {} patches pass", commits.len()),
    }
}
