//! `git jules sprint …`: sprints on refs/jules/state (start, status, close, notes, stats).

use std::path::PathBuf;

use std::io::Write;

use anyhow::Context as _;
use git_jules::capabilities::state::stats::{sprint_stats, SprintStats};
use git_jules::capabilities::state::view::StateView;
use git_jules::capabilities::state::State;
use serde::Serialize;

use super::state::DEFAULT_ACTOR;
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    let state = State::open(&repo)?.with_passed_over(Some(ctx.passed_over.clone()));
    match cmd {
        SprintCommand::Start { number, actor } => {
            let sprint = state.sprint_start(&actor, number)?;
            ctx.ui.print(&Changed {
                action: "started",
                sprint,
            });
        }
        SprintCommand::Close { number, actor } => {
            let sprint = state.sprint_close(&actor, number)?;
            ctx.ui.print(&Changed {
                action: "closed",
                sprint,
            });
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
            let sprint = state.sprint_note(&actor, &persona, &kind, &text)?;
            ctx.ui.print(&Noted {
                kind,
                persona,
                sprint,
            });
        }
        SprintCommand::Status => {
            let view = state.view()?.view;
            ctx.ui.print(&Status(&view));
        }
        SprintCommand::Stats => {
            let view = state.view()?.view;
            ctx.ui.print(&Stats(sprint_stats(&view)));
        }
    }
    Ok(0)
}

/// `sprint start` (its number on stdout) and `sprint close` (`sprint N closed` on stderr):
/// `{"action", "sprint"}` in JSON.
#[derive(Serialize)]
struct Changed {
    action: &'static str,
    sprint: u64,
}

impl Print for Changed {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        match self.action {
            "started" => writeln!(out, "{}", self.sprint),
            _ => Ok(()),
        }
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        match self.action {
            "started" => Vec::new(),
            action => vec![format!("sprint {} {action}", self.sprint)],
        }
    }
}

/// `sprint note`: `{"kind", "persona", "sprint"}` in JSON, a status line for a person.
#[derive(Serialize)]
struct Noted {
    kind: String,
    persona: String,
    sprint: u64,
}

impl Print for Noted {
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![format!(
            "{} note for {} added to sprint {}",
            self.kind, self.persona, self.sprint
        )]
    }
}

/// `sprint status`: the current sprint, its runs, notes and tasks; the library's `SprintStatus` in JSON.
struct Status<'a>(&'a StateView);

impl Serialize for Status<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        git_jules::capabilities::state::status::sprint_status(self.0).serialize(s)
    }
}

impl Print for Status<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let view = self.0;
        let Some(s) = view.current_sprint.and_then(|n| view.sprints.get(&n)) else {
            return writeln!(out, "no sprint started: `git jules sprint start`");
        };
        writeln!(
            out,
            "sprint {} started {}{}",
            s.number,
            s.started_at,
            s.closed_at
                .as_ref()
                .map(|c| format!(", closed {c}"))
                .unwrap_or_default()
        )?;
        for r in view.runs.iter().filter(|r| r.sprint == Some(s.number)) {
            writeln!(
                out,
                "  run {:>3} {:<12} {:<8} {}",
                r.index,
                r.persona_id,
                r.reason,
                r.status.as_deref().unwrap_or("-")
            )?;
        }
        for n in &s.notes {
            writeln!(out, "  {} ({}): {}", n.persona, n.kind, n.text.trim())?;
        }
        for t in view.tasks.iter().filter(|t| t.sprint == Some(s.number)) {
            writeln!(out, "  task {} [{}] {}", &t.id[..7], t.state, t.title)?;
        }
        Ok(())
    }
}

/// `sprint stats`: a table; the list in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Stats(Vec<SprintStats>);

impl Print for Stats {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        writeln!(
            out,
            "sprint  ticks  runs  ok  failed  re-runs  weaves  conflict-rate  throughput"
        )?;
        for s in &self.0 {
            writeln!(
                out,
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
            )?;
        }
        Ok(())
    }
}
