//! `series status` and `series list`.

use std::io::Write;

use git_jules::capabilities::series::{self, status::SeriesStatus, status::VerifyState};
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    ctx.ui.print(&st);
    Ok(0)
}

/// `series status`: the series, an interrupted operation, each patch with its verify result; a hint on
/// stderr when no verify command is set.
impl Print for SeriesStatus {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let st = self;
        writeln!(
            out,
            "series {} ({}), base {}",
            style.bold(&st.series),
            st.branch,
            st.base.describe()
        )?;
        if let Some(op) = &st.interrupted {
            writeln!(
                out,
                "interrupted: `{op}` was killed before it finished; `git jules series reroll` finishes it, `git jules series undo` reverts it"
            )?;
        }
        if st.patches.is_empty() {
            return writeln!(out, "no patches: {}..{} is empty", st.base.name, st.branch);
        }
        let n = st.patches.len();
        for p in &st.patches {
            let word = state_word(p.verify);
            let word = match p.verify {
                VerifyState::Pass => style.green(word),
                VerifyState::Fail => style.red(word),
                _ => word.to_owned(),
            };
            writeln!(
                out,
                "  {:>2}/{n} {} {:<10} {}",
                p.patch.index,
                style.yellow(&p.short),
                word,
                p.patch.summary
            )?;
        }
        Ok(())
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        if self.patches.is_empty() || self.verify_command.is_some() {
            return Vec::new();
        }
        vec![
            "hint: set `git config jules.verify.cmd CMD` (or pass --cmd) to see verify results"
                .into(),
        ]
    }
}

/// `series list`: one line a series (`*` the current one); a list in JSON (`{"version", "items"}`).
#[derive(Serialize)]
#[serde(transparent)]
struct Listed(Vec<SeriesStatus>);

impl Print for Listed {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        for st in &self.0 {
            let (pass, fail, unverified) = st.counts();
            let verify = if st.verify_command.is_some() {
                format!("{pass} pass, {fail} fail, {unverified} unverified")
            } else {
                "verify: no jules.verify.cmd".to_owned()
            };
            writeln!(
                out,
                "{} {:<20} {:>3} patches  base {:<16} {}",
                if st.current { "*" } else { " " },
                st.series,
                st.patches.len(),
                st.base.name,
                verify
            )?;
        }
        Ok(())
    }

    fn human_status(&self, _: &Style) -> Vec<String> {
        if !self.0.is_empty() {
            return Vec::new();
        }
        vec!["no series: start one with `git jules series start NAME`".into()]
    }
}

pub fn list(ctx: &Context, a: ListArgs) -> anyhow::Result<i32> {
    if a.all {
        return super::version::list_all(ctx, a.cmd.as_deref());
    }
    ctx.ui.print(&Listed(series::status::read_all(
        &ctx.workspace()?,
        a.cmd.as_deref(),
    )?));
    Ok(0)
}
