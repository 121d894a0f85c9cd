//! `series status` and `series list`.

use git_jules::series::{self, status::VerifyState};

use super::super::ui;
use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The series (default: the one HEAD is on)
    pub name: Option<String>,
    /// Measure against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Show cached results of this command (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD")]
    pub cmd: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Every persona's series from their recorded versions (refs/jules/series/*, local and fetched)
    #[arg(long)]
    pub all: bool,
    /// Show cached results of this command (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD")]
    pub cmd: Option<String>,
}

fn state_word(s: VerifyState) -> &'static str {
    match s {
        VerifyState::Pass => "pass",
        VerifyState::Fail => "FAIL",
        VerifyState::Unverified => "unverified",
        VerifyState::Unknown => "-",
    }
}

pub fn status(ctx: &Context, a: StatusArgs) -> anyhow::Result<i32> {
    let st = series::status::read(
        &ctx.workspace()?,
        &series::status::StatusInput {
            name: a.name,
            base: a.base,
            cmd: a.cmd,
        },
    )?;
    if ctx.ui.json {
        ui::json(&st);
        return Ok(0);
    }
    ui::out(format!(
        "series {} ({}), base {}",
        ctx.ui.bold(&st.series),
        st.branch,
        st.base.describe()
    ));
    if let Some(op) = &st.interrupted {
        ui::out(format!(
            "interrupted: `{op}` was killed before it finished; `git jules series reroll` finishes it, `git jules series undo` reverts it"
        ));
    }
    if st.patches.is_empty() {
        ui::out(format!(
            "no patches: {}..{} is empty",
            st.base.name, st.branch
        ));
        return Ok(0);
    }
    let n = st.patches.len();
    for p in &st.patches {
        let word = state_word(p.verify);
        let word = match p.verify {
            VerifyState::Pass => ctx.ui.green(word),
            VerifyState::Fail => ctx.ui.red(word),
            _ => word.to_owned(),
        };
        ui::out(format!(
            "  {:>2}/{n} {} {:<10} {}",
            p.patch.index,
            ctx.ui.yellow(&p.short),
            word,
            p.patch.summary
        ));
    }
    if st.verify_command.is_none() {
        ui::status(
            "hint: set `git config jules.verify.cmd CMD` (or pass --cmd) to see verify results",
        );
    }
    Ok(0)
}

pub fn list(ctx: &Context, a: ListArgs) -> anyhow::Result<i32> {
    if a.all {
        return super::version::list_all(ctx, a.cmd.as_deref());
    }
    let all = series::status::read_all(&ctx.workspace()?, a.cmd.as_deref())?;
    if ctx.ui.json {
        ui::json(&all);
        return Ok(0);
    }
    if all.is_empty() {
        ui::status("no series: start one with `git jules series start NAME`");
    }
    for st in &all {
        let (pass, fail, unverified) = st.counts();
        let verify = if st.verify_command.is_some() {
            format!("{pass} pass, {fail} fail, {unverified} unverified")
        } else {
            "verify: no jules.verify.cmd".to_owned()
        };
        ui::out(format!(
            "{} {:<20} {:>3} patches  base {:<16} {}",
            if st.current { "*" } else { " " },
            st.series,
            st.patches.len(),
            st.base.name,
            verify
        ));
    }
    Ok(0)
}
