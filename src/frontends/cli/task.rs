//! `git jules task …`: the sprint's tasks (add, done, cancel, ls); done and ls are the library's
//! `tasks` use cases.

use git_jules::capabilities::state::State;

use std::io::Write;

use git_jules::capabilities::sprint_tasks::Done;
use git_jules::capabilities::state::view::Task;
use serde::Serialize;

use super::state::DEFAULT_ACTOR;
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    let state = State::open(&repo)?.with_passed_over(Some(ctx.passed_over.clone()));
    match cmd {
        TaskCommand::Add {
            title,
            persona,
            paths,
            actor,
        } => {
            if !paths.is_empty() {
                git_jules::capabilities::lease::parse_patterns(&paths, true)?;
            }
            let id = state.task_add_paths(&actor, &title, persona.as_deref(), &paths)?;
            ctx.ui.print(&Changed {
                state: "todo",
                task: id.to_hex(),
                shown: Shown::Id,
            });
        }
        TaskCommand::Done { id, actor } => {
            let done = git_jules::capabilities::sprint_tasks::done(
                &ctx.workspace_of(repo.clone()),
                &actor,
                &id,
            )?;
            ctx.ui.print(&done);
        }
        TaskCommand::Cancel { id, actor } => {
            let task = state.task_resolve(&actor, &id, false)?;
            ctx.ui.print(&Changed {
                state: "canceled",
                task,
                shown: Shown::Status,
            });
        }
        TaskCommand::Ls {
            state: wanted,
            persona,
        } => {
            let query = git_jules::capabilities::sprint_tasks::TaskQuery {
                state: wanted,
                persona,
            };
            let tasks = git_jules::capabilities::sprint_tasks::list(
                &ctx.workspace_of(repo.clone()),
                &query,
            )?;
            ctx.ui.print(&Tasks(tasks));
        }
    }
    Ok(0)
}

/// A task whose state a command set (`task add`, `task cancel`): `{"state", "task"}` in JSON.
#[derive(Serialize)]
struct Changed {
    state: &'static str,
    task: String,
    /// How a person is told.
    #[serde(skip)]
    shown: Shown,
}

enum Shown {
    /// The new task's short id on stdout, for scripts (`task add`).
    Id,
    /// `task 1a2b3c4 canceled` on stderr.
    Status,
}

impl Print for Changed {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        match self.shown {
            Shown::Id => writeln!(out, "{}", &self.task[..7]),
            Shown::Status => Ok(()),
        }
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        match self.shown {
            Shown::Id => Vec::new(),
            Shown::Status => vec![format!("task {} {}", &self.task[..7], self.state)],
        }
    }
}

impl Print for Done {
    fn warnings(&self) -> Vec<String> {
        self.release_error
            .iter()
            .map(|e| format!("the task's leases were not released: {e}"))
            .collect()
    }
    fn status(&self, _: &Style) -> Vec<String> {
        if self.release_error.is_none() && !self.released.is_empty() {
            vec![format!(
                "released {} lease(s) acquired for the task",
                self.released.len()
            )]
        } else {
            Vec::new()
        }
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![format!("task {} done", &self.task[..7])]
    }
}

/// `task ls`: one line a task; a list in JSON (`{"version", "items"}`).
#[derive(Serialize)]
#[serde(transparent)]
struct Tasks(Vec<Task>);

impl Print for Tasks {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        for t in &self.0 {
            writeln!(
                out,
                "{} [{:<8}] {}{}",
                &t.id[..7],
                t.state,
                t.title,
                t.persona
                    .as_ref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};

    fn task(id: &str, title: &str, persona: Option<&str>) -> Task {
        serde_json::from_value(serde_json::json!({
            "id": id, "title": title, "state": "todo", "persona": persona,
            "created_at": "2026-11-23T21:03:06.006Z", "updated_at": "2026-11-23T21:03:06.006Z",
        }))
        .unwrap()
    }

    /// `task ls` as a person and as a program read it, byte for byte, from one value.
    #[test]
    fn task_ls_prints_the_same_value_two_ways() {
        let tasks = Tasks(vec![
            task(&"ab".repeat(32), "write docs", Some("alice")),
            task(&"cd".repeat(32), "fix it", None),
        ]);
        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone())).print(&tasks);
        assert_eq!(
            out.text(),
            "abababa [todo    ] write docs (alice)\ncdcdcdc [todo    ] fix it\n"
        );
        assert_eq!(err.text(), "");
        let out = Buffer::default();
        Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone())).print(&tasks);
        let doc: serde_json::Value = serde_json::from_str(&out.text()).unwrap();
        assert_eq!(doc["version"], 1);
        assert_eq!(doc["items"][0]["title"], "write docs");
        assert!(out
            .text()
            .starts_with("{\n  \"version\": 1,\n  \"items\": ["));
    }

    /// `task done`: a failed release is a warning in both forms, the status line a person's only, and
    /// `-q` silences status but never a warning.
    #[test]
    fn task_done_says_its_warning_in_both_forms() {
        let done = Done {
            state: "done",
            task: "ef".repeat(32),
            released: Vec::new(),
            release_error: Some("the lease log moved".into()),
        };
        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone())).print(&done);
        assert_eq!(out.text(), "");
        assert_eq!(
            err.text(),
            "warning: the task's leases were not released: the lease log moved\ntask efefefe done\n"
        );
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut ui = Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone()));
        ui.quiet = true;
        ui.print(&done);
        assert_eq!(
            err.text(),
            "warning: the task's leases were not released: the lease log moved\n"
        );
        assert_eq!(
            out.text(),
            format!(
                "{{\n  \"version\": 1,\n  \"state\": \"done\",\n  \"task\": \"{}\",\n  \"release_error\": \"the lease log moved\"\n}}\n",
                "ef".repeat(32)
            )
        );
    }
}
