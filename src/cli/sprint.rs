//! `git jules sprint …`: sprints on refs/jules/state (start, status, close, notes, stats).

use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::state::{stats::sprint_stats, State};

use super::state::DEFAULT_ACTOR;
use crate::cli::context::Context;

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

pub fn run_sprint(ctx: &Context, cmd: SprintCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let state = State::open(&repo)?;
    match cmd {
        SprintCommand::Start { number, actor } => {
            let n = state.sprint_start(&actor, number)?;
            if ctx.ui.json {
                ctx.ui
                    .json(&serde_json::json!({ "sprint": n, "action": "started" }));
            } else {
                ctx.ui.out(n.to_string());
            }
        }
        SprintCommand::Close { number, actor } => {
            let n = state.sprint_close(&actor, number)?;
            if ctx.ui.json {
                ctx.ui
                    .json(&serde_json::json!({ "sprint": n, "action": "closed" }));
            } else {
                ctx.ui.status(format!("sprint {n} closed"));
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
                ctx.ui
                    .json(&serde_json::json!({ "sprint": n, "persona": persona, "kind": kind }));
            } else {
                ctx.ui
                    .status(format!("{kind} note for {persona} added to sprint {n}"));
            }
        }
        SprintCommand::Status => {
            let view = state.view()?.view;
            let current = view.current_sprint.and_then(|n| view.sprints.get(&n));
            if ctx.ui.json {
                ctx.ui.json(&git_jules::state::status::sprint_status(&view));
            } else {
                match current {
                    None => ctx.ui.out("no sprint started: `git jules sprint start`"),
                    Some(s) => {
                        ctx.ui.out(format!(
                            "sprint {} started {}{}",
                            s.number,
                            s.started_at,
                            s.closed_at
                                .as_ref()
                                .map(|c| format!(", closed {c}"))
                                .unwrap_or_default()
                        ));
                        for r in view.runs.iter().filter(|r| r.sprint == Some(s.number)) {
                            ctx.ui.out(format!(
                                "  run {:>3} {:<12} {:<8} {}",
                                r.index,
                                r.persona_id,
                                r.reason,
                                r.status.as_deref().unwrap_or("-")
                            ));
                        }
                        for n in &s.notes {
                            ctx.ui
                                .out(format!("  {} ({}): {}", n.persona, n.kind, n.text.trim()));
                        }
                        for t in view.tasks.iter().filter(|t| t.sprint == Some(s.number)) {
                            ctx.ui
                                .out(format!("  task {} [{}] {}", &t.id[..7], t.state, t.title));
                        }
                    }
                }
            }
        }
        SprintCommand::Stats => {
            let view = state.view()?.view;
            let stats = sprint_stats(&view);
            if ctx.ui.json {
                ctx.ui.json(&stats);
            } else {
                ctx.ui.out(
                    "sprint  ticks  runs  ok  failed  re-runs  weaves  conflict-rate  throughput",
                );
                for s in &stats {
                    ctx.ui.out(format!(
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
