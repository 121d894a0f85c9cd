//! The series use cases a frontend offers besides the rewrites: verifying a range as `git jules verify`
//! does (its base found the series' way), as one typed call.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::verify::{self, CommitResult, Report};
use crate::workspace::Workspace;
use crate::{Error, ErrorKind, Remedy, Result};

/// What to verify and how; every field left out falls back to the configuration, as for the CLI.
#[derive(Debug, Clone, Default)]
pub struct VerifyInput {
    /// The tip (default `HEAD`); a local branch brings its configured base along.
    pub rev: Option<String>,
    /// The base (default: the branch's base, then main, master, origin/main, origin/master).
    pub base: Option<String>,
    /// The command (default `jules.verify.cmd`).
    pub cmd: Option<String>,
    pub jobs: Option<u32>,
    pub keep_going: bool,
    /// Ignore cached results.
    pub force: bool,
    /// Where the temporary worktrees go (default `jules.verify.worktreeDir`, then `/dev/shm`, then the
    /// temporary directory).
    pub worktree_dir: Option<PathBuf>,
}

/// A verify run's report and what it ran against.
#[derive(Debug, Clone)]
pub struct Verified {
    pub report: Report,
    /// The base's name, as resolved.
    pub base: String,
    /// Whether the tip is the base itself (nothing of a series to verify).
    pub on_base: bool,
}

/// A verify run resolved and ready: what [`run`] will do, for a frontend to show before it starts.
#[derive(Debug, Clone)]
pub struct VerifyPlan {
    pub base: crate::base::Base,
    pub tip: super::Tip,
    pub options: verify::Options,
}

impl VerifyPlan {
    /// Whether the tip is the base itself (nothing of a series to verify).
    pub fn on_base(&self) -> bool {
        self.base.commit == self.tip.commit
            || self.tip.branch.as_deref() == Some(self.base.name.as_str())
    }
}

/// Resolve the command, the tip and the base of a verify run.
pub fn plan(ws: &Workspace, input: &VerifyInput) -> Result<VerifyPlan> {
    let repo = ws.repo();
    let settings = verify::Settings::from_config(
        &repo,
        &verify::Overrides {
            cmd: input.cmd.clone(),
            jobs: input.jobs,
            worktree_dir: input.worktree_dir.clone(),
            temp_dir: ws.scratch_dir(),
        },
    )?;
    let Some(options) = settings.options(input.keep_going, input.force) else {
        return Err(Error::needs(
            ErrorKind::Usage,
            "no verify command",
            Remedy::VerifyCommand,
        ));
    };
    let tip = super::resolve_tip(&repo, input.rev.as_deref())?;
    let base = super::base::resolve(&repo, input.base.as_deref(), tip.branch.as_deref())?;
    Ok(VerifyPlan { base, tip, options })
}

/// The commits a plan covers (for a progress count).
pub fn count(ws: &Workspace, plan: &VerifyPlan) -> Result<usize> {
    Ok(super::patches(&ws.repo(), plan.base.commit, plan.tip.commit)?.len())
}

/// Run a plan: the verify command on every commit of base..tip in private worktrees, with the notes
/// cache. `interrupt` stops it (the report says so); `on_result` sees each commit's result as it comes.
pub fn run(
    ws: &Workspace,
    plan: VerifyPlan,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Verified> {
    let on_base = plan.on_base();
    let base = plan.base.name.clone();
    let report = verify::verify(
        &ws.repo(),
        plan.base,
        plan.tip.commit,
        &plan.options,
        interrupt,
        on_result,
    )?;
    Ok(Verified {
        report,
        base,
        on_base,
    })
}

/// [`plan`] and [`run`] in one call.
pub fn verify(
    ws: &Workspace,
    input: &VerifyInput,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Verified> {
    let plan = plan(ws, input)?;
    run(ws, plan, interrupt, on_result)
}
