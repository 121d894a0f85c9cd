//! `git jules state …`, `git jules sprint …`, `git jules task …`: the sprint state on refs/jules/state.

use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::state::{stats::sprint_stats, RecordArgs, State};

use super::ui;
use crate::cli::context::Context;

/// Who writes state events when no persona is named: the scheduler.
const DEFAULT_ACTOR: &str = "scheduler";

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum StateCommand {
    /// Print the cycle state in seed 004's `cycle_state.json` shape (`--json`), or as a table
    Show,
    /// Import a `cycle_state.json` (history as a dict or as the legacy list); importing twice adds nothing
    Import {
        file: PathBuf,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Record a run: a persona's session was launched
    Record {
        #[arg(long)]
        persona: String,
        #[arg(long)]
        session: Option<String>,
        #[arg(long, default_value = "default")]
        track: String,
        #[arg(long)]
        pr: Option<u64>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Mark a run finished, named by its session id (or a prefix of its run id)
    Done {
        #[arg(long, value_name = "SESSION")]
        session: String,
        #[arg(long, default_value = "ok", value_parser = ["ok", "failed"])]
        status: String,
        #[arg(long)]
        pr: Option<u64>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
}

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum SprintCommand {
    /// Start a sprint (default: the one after the current)
    Start {
        number: Option<u64>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// The current sprint: number, mode, runs, notes and open tasks
    Status,
    /// Close a sprint (default: the current)
    Close {
        number: Option<u64>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Add a persona's plan or feedback note to the current sprint
    Note {
        #[arg(long)]
        persona: String,
        #[arg(long, value_parser = ["plan", "feedback"])]
        kind: String,
        /// The note (or use -F)
        #[arg(long, conflicts_with = "file", required_unless_present = "file")]
        text: Option<String>,
        #[arg(short = 'F', long = "file")]
        file: Option<PathBuf>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Ticks used, conflict rate, re-runs and throughput per sprint
    Stats,
}

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum TaskCommand {
    /// Add a task (state todo) to the current sprint
    Add {
        title: String,
        #[arg(long)]
        persona: Option<String>,
        /// A path or glob the task will change (repeatable): `tick` holds the persona back while another
        /// persona holds an exclusive lease on it
        #[arg(long = "path", value_name = "PATHSPEC")]
        paths: Vec<String>,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Mark a task done
    Done {
        id: String,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// Cancel a task
    Cancel {
        id: String,
        #[arg(long, env = "JULES_PERSONA", default_value = DEFAULT_ACTOR)]
        actor: String,
    },
    /// List tasks
    Ls {
        #[arg(long, value_parser = ["todo", "done", "canceled"])]
        state: Option<String>,
        #[arg(long)]
        persona: Option<String>,
    },
}

pub fn run_state(ctx: &Context, cmd: StateCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let state = State::open(&repo)?;
    match cmd {
        StateCommand::Show => {
            let view = state.view()?.view;
            if ctx.ui.json {
                ui::json(&view.cycle_state());
            } else {
                for r in &view.runs {
                    ui::out(format!(
                        "{:>4} {:<12} {:<10} {:<9} {:<20} {} {}",
                        r.index,
                        r.persona_id,
                        r.track,
                        r.status.as_deref().unwrap_or("-"),
                        r.session_id.as_deref().unwrap_or("-"),
                        r.pr_number
                            .map(|p| format!("#{p}"))
                            .unwrap_or_else(|| "-".into()),
                        ctx.ui.dim(&r.created_at)
                    ));
                }
                for (name, t) in &view.tracks {
                    ui::out(format!(
                        "track {name}: {} {} {}",
                        t.persona_id,
                        t.session_id.as_deref().unwrap_or("-"),
                        t.updated_at
                    ));
                }
            }
        }
        StateCommand::Import { file, actor } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {} (it must be UTF-8 JSON)", file.display()))?;
            let report = state.import_cycle_state(&actor, &text)?;
            if ctx.ui.json {
                ui::json(&report);
            } else {
                ui::status(format!(
                    "imported {} runs and {} tracks: {} events added, {} already present",
                    report.runs, report.tracks, report.added, report.already_present
                ));
            }
        }
        StateCommand::Record {
            persona,
            session,
            track,
            pr,
            actor,
        } => {
            let id = state.record(
                &actor,
                &RecordArgs {
                    persona,
                    session,
                    track,
                    pr,
                    reason: "manual".into(),
                },
            )?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "run": id.to_hex() }));
            } else {
                ui::out(id.short(12));
            }
        }
        StateCommand::Done {
            session,
            status,
            pr,
            actor,
        } => {
            let run = state.done(&actor, &session, &status, pr)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "run": run, "status": status }));
            } else {
                ui::status(format!("run {} is {status}", &run[..12]));
            }
        }
    }
    Ok(0)
}

pub fn run_sprint(ctx: &Context, cmd: SprintCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let state = State::open(&repo)?;
    match cmd {
        SprintCommand::Start { number, actor } => {
            let n = state.sprint_start(&actor, number)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "sprint": n, "action": "started" }));
            } else {
                ui::out(n.to_string());
            }
        }
        SprintCommand::Close { number, actor } => {
            let n = state.sprint_close(&actor, number)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "sprint": n, "action": "closed" }));
            } else {
                ui::status(format!("sprint {n} closed"));
            }
        }
        SprintCommand::Note {
            persona,
            kind,
            text,
            file,
            actor,
        } => {
            let text = match (text, file) {
                (Some(t), _) => t,
                (None, Some(f)) => std::fs::read_to_string(&f)
                    .with_context(|| format!("reading {} (it must be UTF-8)", f.display()))?,
                (None, None) => unreachable!("clap requires one"),
            };
            let n = state.sprint_note(&actor, &persona, &kind, &text)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "sprint": n, "persona": persona, "kind": kind }));
            } else {
                ui::status(format!("{kind} note for {persona} added to sprint {n}"));
            }
        }
        SprintCommand::Status => {
            let view = state.view()?.view;
            let current = view.current_sprint.and_then(|n| view.sprints.get(&n));
            if ctx.ui.json {
                ui::json(&git_jules::state::status::sprint_status(&view));
            } else {
                match current {
                    None => ui::out("no sprint started: `git jules sprint start`"),
                    Some(s) => {
                        ui::out(format!(
                            "sprint {} started {}{}",
                            s.number,
                            s.started_at,
                            s.closed_at
                                .as_ref()
                                .map(|c| format!(", closed {c}"))
                                .unwrap_or_default()
                        ));
                        for r in view.runs.iter().filter(|r| r.sprint == Some(s.number)) {
                            ui::out(format!(
                                "  run {:>3} {:<12} {:<8} {}",
                                r.index,
                                r.persona_id,
                                r.reason,
                                r.status.as_deref().unwrap_or("-")
                            ));
                        }
                        for n in &s.notes {
                            ui::out(format!("  {} ({}): {}", n.persona, n.kind, n.text.trim()));
                        }
                        for t in view.tasks.iter().filter(|t| t.sprint == Some(s.number)) {
                            ui::out(format!("  task {} [{}] {}", &t.id[..7], t.state, t.title));
                        }
                    }
                }
            }
        }
        SprintCommand::Stats => {
            let view = state.view()?.view;
            let stats = sprint_stats(&view);
            if ctx.ui.json {
                ui::json(&stats);
            } else {
                ui::out(
                    "sprint  ticks  runs  ok  failed  re-runs  weaves  conflict-rate  throughput",
                );
                for s in &stats {
                    ui::out(format!(
                        "{:>6}  {:>5}  {:>4}  {:>2}  {:>6}  {:>7}  {:>6}  {:>13.2}  {:>10.2}",
                        s.sprint,
                        s.ticks_used,
                        s.runs,
                        s.runs_ok,
                        s.runs_failed,
                        s.reruns,
                        s.weaves,
                        s.conflict_rate,
                        s.throughput
                    ));
                }
            }
        }
    }
    Ok(0)
}

pub fn run_task(ctx: &Context, cmd: TaskCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let state = State::open(&repo)?;
    match cmd {
        TaskCommand::Add {
            title,
            persona,
            paths,
            actor,
        } => {
            if !paths.is_empty() {
                git_jules::lease::parse_patterns(&paths, true)?;
            }
            let id = state.task_add_paths(&actor, &title, persona.as_deref(), &paths)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "task": id.to_hex(), "state": "todo" }));
            } else {
                ui::out(id.short(7));
            }
        }
        TaskCommand::Done { id, actor } => {
            let done = git_jules::tasks::done(&ctx.workspace_of(repo.clone()), &actor, &id)?;
            match &done.release_error {
                Some(e) => ui::warn(format!("the task's leases were not released: {e}")),
                None if !done.released.is_empty() => ui::status(format!(
                    "released {} lease(s) acquired for the task",
                    done.released.len()
                )),
                None => {}
            }
            if ctx.ui.json {
                ui::json(&done);
            } else {
                ui::status(format!("task {} done", &done.task[..7]));
            }
        }
        TaskCommand::Cancel { id, actor } => {
            let id = state.task_resolve(&actor, &id, false)?;
            if ctx.ui.json {
                ui::json(&serde_json::json!({ "task": id, "state": "canceled" }));
            } else {
                ui::status(format!("task {} canceled", &id[..7]));
            }
        }
        TaskCommand::Ls {
            state: wanted,
            persona,
        } => {
            let query = git_jules::tasks::TaskQuery {
                state: wanted,
                persona,
            };
            let tasks = git_jules::tasks::list(&ctx.workspace_of(repo.clone()), &query)?;
            if ctx.ui.json {
                ui::json(&tasks);
            } else {
                for t in tasks {
                    ui::out(format!(
                        "{} [{:<8}] {}{}",
                        &t.id[..7],
                        t.state,
                        t.title,
                        t.persona
                            .as_ref()
                            .map(|p| format!(" ({p})"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
    }
    Ok(0)
}
