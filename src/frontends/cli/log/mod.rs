//! `git jules log …`: the event logs themselves. One file per command: `append`, `read` (show, get, stats),
//! `fsck` (fsck, checkpoint), `held` (held-back); `list` is here.

mod append;
mod fsck;
mod held;
mod read;

use git_jules::store::eventlog;

use crate::frontends::context::Context;
use crate::frontends::ui;
pub use append::AppendArgs;
pub use fsck::{CheckpointArgs, FsckArgs};
pub use held::HeldBackArgs;
pub use read::{GetArgs, RefArg, ShowArgs};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum LogCommand {
    /// Append one event (or, with --batch, every JSON line of stdin) to a log
    Append(AppendArgs),
    /// List a log's events in their total order
    Show(ShowArgs),
    /// Show one event, named by a unique prefix of its id
    Get(GetArgs),
    /// Count a log's events by kind and actor (from the projection cache)
    Stats(RefArg),
    /// Check every commit of a log (default: all logs) and report those that are not valid events
    Fsck(FsckArgs),
    /// List the logs in this repository
    List,
    /// Store the log's projections (stats, and mail or state) as a checkpoint on the log, at its local tip
    Checkpoint(CheckpointArgs),
    /// List the events the last sync held back (the remote refuses them); drop or re-sign them
    HeldBack(HeldBackArgs),
}

pub fn run(ctx: &Context, cmd: LogCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    match cmd {
        LogCommand::Append(a) => append::append(ctx, &repo, a),
        LogCommand::Show(a) => read::show(ctx, &repo, a),
        LogCommand::Get(a) => read::get(ctx, &repo, a),
        LogCommand::Stats(a) => read::stats(ctx, &repo, a),
        LogCommand::Fsck(a) => fsck::fsck(ctx, &repo, a),
        LogCommand::Checkpoint(a) => fsck::checkpoint(ctx, &repo, a),
        LogCommand::HeldBack(a) => held::run(ctx, &repo, a),
        LogCommand::List => {
            ctx.ui.print(&Logs(eventlog::list_logs(&repo)?));
            Ok(0)
        }
    }
}

/// `log list`: one ref a line; the list in JSON.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Logs(Vec<String>);

impl ui::Print for Logs {
    fn human(&self, out: &mut dyn std::io::Write, _: &ui::Style) -> std::io::Result<()> {
        for l in &self.0 {
            writeln!(out, "{l}")?;
        }
        Ok(())
    }
}

pub(super) fn warn_invalid(ui: &ui::Ui, invalid: &[eventlog::InvalidCommit]) {
    for i in invalid {
        ui.warn(format!("skipping commit {}: {}", i.commit, i.reason));
    }
}

/// Each event's signature state; all `None` when the repository verifies nothing.
pub(super) fn signature_states(
    repo: &gix::Repository,
    events: &[&eventlog::LoggedEvent],
) -> git_jules::Result<Vec<Option<git_jules::store::sign::State>>> {
    let Some(mut verifier) = eventlog::Verifier::open(repo)? else {
        return Ok(vec![None; events.len()]);
    };
    events.iter().map(|e| verifier.state(e.commit)).collect()
}
