//! `git jules task …`: the sprint's tasks (add, done, cancel, ls); done and ls are the library's
//! `tasks` use cases.

use git_jules::state::State;

use super::state::DEFAULT_ACTOR;
use crate::cli::context::Context;

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
                ctx.ui
                    .json(&serde_json::json!({ "task": id.to_hex(), "state": "todo" }));
            } else {
                ctx.ui.out(id.short(7));
            }
        }
        TaskCommand::Done { id, actor } => {
            let done = git_jules::tasks::done(&ctx.workspace_of(repo.clone()), &actor, &id)?;
            match &done.release_error {
                Some(e) => ctx
                    .ui
                    .warn(format!("the task's leases were not released: {e}")),
                None if !done.released.is_empty() => ctx.ui.status(format!(
                    "released {} lease(s) acquired for the task",
                    done.released.len()
                )),
                None => {}
            }
            if ctx.ui.json {
                ctx.ui.json(&done);
            } else {
                ctx.ui.status(format!("task {} done", &done.task[..7]));
            }
        }
        TaskCommand::Cancel { id, actor } => {
            let id = state.task_resolve(&actor, &id, false)?;
            if ctx.ui.json {
                ctx.ui
                    .json(&serde_json::json!({ "task": id, "state": "canceled" }));
            } else {
                ctx.ui.status(format!("task {} canceled", &id[..7]));
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
                ctx.ui.json(&tasks);
            } else {
                for t in tasks {
                    ctx.ui.out(format!(
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
