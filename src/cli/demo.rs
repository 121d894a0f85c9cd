//! `git jules demo`: a self-contained run in a temporary directory, printing each step.
//!
//! Today it shows the foundation every subsystem stands on: three persona sandboxes append events offline,
//! sync through a bare remote in turn, and end with the same log in the same order.

use std::path::Path;
use std::time::Instant;

use anyhow::{ensure, Context as _};
use git_jules::eventlog::{Event, Log, NewEvent};
use git_jules::{gitcli, init, sync};

use super::{ui, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the temporary directory and print its path
    #[arg(long)]
    pub keep: bool,
}

const PERSONAS: [&str; 3] = ["curator", "refactor", "weaver"];

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let started = Instant::now();
    let tmp = tempfile::Builder::new()
        .prefix("git-jules-demo-")
        .tempdir()?;
    let root = tmp.path();
    let step = |n: u32, text: &str| ui::out(format!("{} {text}", ctx.ui.bold(&format!("[{n}]"))));

    step(
        1,
        "a bare remote and three persona sandboxes cloned from it",
    );
    gitcli::run(root, ["init", "-q", "--bare", "-b", "main", "remote.git"])?;
    let seed = root.join("seed");
    gitcli::run(root, ["init", "-q", "-b", "main", "seed"])?;
    std::fs::write(seed.join("README.md"), "demo\n")?;
    let ident = [
        "-c",
        "user.name=demo",
        "-c",
        "user.email=demo@jules.invalid",
    ];
    gitcli::run(&seed, ["add", "-A"])?;
    gitcli::run(
        &seed,
        ident.iter().copied().chain(["commit", "-qm", "initial"]),
    )?;
    gitcli::run(&seed, ["push", "-q", "../remote.git", "main"])?;
    for p in PERSONAS {
        gitcli::run(root, ["clone", "-q", "remote.git", p])?;
        let mut repo = git_jules::repo::open(&root.join(p))?;
        init::init(&mut repo, &[])?;
    }
    ui::out("    each sandbox ran `git jules init`: plain fetch/push now carry refs/jules/*");

    step(2, "every persona appends events while offline");
    for (i, p) in PERSONAS.iter().enumerate() {
        let repo = git_jules::repo::open(&root.join(p))?;
        let log = Log::open(&repo, "demo")?;
        let events = (0..3)
            .map(|n| {
                NewEvent::new(Event::new(
                    "demo.note",
                    *p,
                    serde_json::json!({ "note": format!("{p} note {n}"), "seq": i * 3 + n }),
                ))
            })
            .collect();
        let appended = log.append_batch(events)?;
        ui::out(format!(
            "    {p:<9} appended {} events, clock {}",
            appended.len(),
            appended.last().map_or(0, |a| a.lamport)
        ));
    }

    step(3, "they sync through the remote in turn, twice round");
    for round in 1..=2 {
        for p in PERSONAS {
            let repo = git_jules::repo::open(&root.join(p))?;
            let report = sync::sync(&repo, "origin")?;
            let actions: Vec<String> = report
                .refs
                .iter()
                .map(|r| format!("{} {}", r.name, r.action.as_str()))
                .collect();
            ui::out(format!("    round {round} {p:<9} {}", actions.join(", ")));
        }
    }

    step(4, "every sandbox holds the same events in the same order");
    let mut views = Vec::new();
    for p in PERSONAS {
        views.push(view(&root.join(p))?);
    }
    ensure!(
        views.iter().all(|v| *v == views[0]),
        "the sandboxes disagree"
    );
    for line in &views[0] {
        ui::out(format!("    {line}"));
    }
    for p in PERSONAS {
        let repo = git_jules::repo::open(&root.join(p))?;
        let report = Log::open(&repo, "demo")?.fsck()?;
        ensure!(report.is_clean(), "fsck found problems in {p}");
    }
    ui::out(format!(
        "    {} events, identical in all {} sandboxes, fsck clean; done in {:.2} s",
        views[0].len(),
        PERSONAS.len(),
        started.elapsed().as_secs_f64()
    ));
    if args.keep {
        let kept = tmp.keep();
        ui::out(format!("kept {}", kept.display()));
    }
    Ok(0)
}

fn view(dir: &Path) -> anyhow::Result<Vec<String>> {
    let repo = git_jules::repo::open(dir)?;
    let (events, invalid) = Log::open(&repo, "demo")?.read_all()?;
    ensure!(invalid.is_empty(), "invalid commits in {}", dir.display());
    events
        .iter()
        .map(|e| {
            let note = e.event.data["note"]
                .as_str()
                .context("event without a note")?;
            Ok(format!("{} {:>2} {note}", e.id.short(7), e.lamport))
        })
        .collect()
}
