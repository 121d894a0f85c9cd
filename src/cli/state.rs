//! `git jules state …`: the cycle state on refs/jules/state (seed 004's `cycle_state.json`, runs).

use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::state::{RecordArgs, State};

use crate::cli::context::Context;

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
    let state = State::open(&repo)?;
    match cmd {
        StateCommand::Show => {
            let view = state.view()?.view;
            if ctx.ui.json {
                ctx.ui.json(&view.cycle_state());
            } else {
                for r in &view.runs {
                    ctx.ui.out(format!(
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
                    ctx.ui.out(format!(
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
                ctx.ui.json(&report);
            } else {
                ctx.ui.status(format!(
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
                ctx.ui.json(&serde_json::json!({ "run": id.to_hex() }));
            } else {
                ctx.ui.out(id.short(12));
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
                ctx.ui
                    .json(&serde_json::json!({ "run": run, "status": status }));
            } else {
                ctx.ui.status(format!("run {} is {status}", &run[..12]));
            }
        }
    }
    Ok(0)
}
