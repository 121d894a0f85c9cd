//! `git jules state …`: the cycle state on refs/jules/state (seed 004's `cycle_state.json`, runs).

use std::path::PathBuf;

use std::io::Write;

use anyhow::Context as _;
use git_jules::capabilities::state::view::StateView;
use git_jules::capabilities::state::{ImportReport, RecordArgs, State};
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

/// The actor of state changes when neither `--actor` nor `$JULES_PERSONA` names one.
pub const DEFAULT_ACTOR: &str = "scheduler";

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

pub fn run_state(ctx: &Context, cmd: StateCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let state = State::open(&repo)?.with_passed_over(Some(ctx.passed_over.clone()));
    match cmd {
        StateCommand::Show => {
            let view = state.view()?.view;
            ctx.ui.print(&Show(&view));
        }
        StateCommand::Import { file, actor } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {} (it must be UTF-8 JSON)", file.display()))?;
            ctx.ui.print(&state.import_cycle_state(&actor, &text)?);
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
            ctx.ui.print(&Recorded { run: id.to_hex() });
        }
        StateCommand::Done {
            session,
            status,
            pr,
            actor,
        } => {
            let run = state.done(&actor, &session, &status, pr)?;
            ctx.ui.print(&RunDone { run, status });
        }
    }
    Ok(0)
}

/// `state show`: a table of runs and tracks; seed 004's `cycle_state.json` in JSON.
struct Show<'a>(&'a StateView);

impl Serialize for Show<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.cycle_state().serialize(s)
    }
}

impl Print for Show<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for r in &self.0.runs {
            writeln!(
                out,
                "{:>4} {:<12} {:<10} {:<9} {:<20} {} {}",
                r.index,
                r.persona_id,
                r.track,
                r.status.as_deref().unwrap_or("-"),
                r.session_id.as_deref().unwrap_or("-"),
                r.pr_number
                    .map(|p| format!("#{p}"))
                    .unwrap_or_else(|| "-".into()),
                style.dim(&r.created_at)
            )?;
        }
        for (name, t) in &self.0.tracks {
            writeln!(
                out,
                "track {name}: {} {} {}",
                t.persona_id,
                t.session_id.as_deref().unwrap_or("-"),
                t.updated_at
            )?;
        }
        Ok(())
    }
}

impl Print for ImportReport {
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![format!(
            "imported {} runs and {} tracks: {} events added, {} already present",
            self.runs, self.tracks, self.added, self.already_present
        )]
    }
}

/// `state record`: the run's short id on stdout; `{"run"}` in JSON.
#[derive(Serialize)]
struct Recorded {
    run: String,
}

impl Print for Recorded {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "{}", &self.run[..12])
    }
}

/// `state done`: `run 1a2b… is ok` on stderr; `{"run", "status"}` in JSON.
#[derive(Serialize)]
struct RunDone {
    run: String,
    status: String,
}

impl Print for RunDone {
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![format!("run {} is {}", &self.run[..12], self.status)]
    }
}
