//! `git jules series …`: staging branches, patches with a rationale, rerolls, formatting, review, landing.
//!
//! One file per command group; this module only declares the subcommands and dispatches.

mod finalize;
mod format;
mod reroll;
mod review;
mod start;
mod status;
mod version;

use crate::frontends::context::Context;

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum SeriesCommand {
    /// Create jules/staging/NAME from the base (default: the current branch) and check it out
    Start(start::StartArgs),
    /// Stage every change (like `git add -A`) and commit it as the next patch, with a Rationale: trailer
    Commit(start::CommitArgs),
    /// Show a series (default: the current one): base, numbered patches, cached verify results
    Status(status::StatusArgs),
    /// List every series with its base and verify counts
    List(status::ListArgs),
    /// Fold the working tree into patch N (or reword, drop, move a patch) and replay the rest, in memory
    Reroll(reroll::RerollArgs),
    /// Restore the series branch to its latest backup (refs/jules/backup/series/NAME/N)
    Undo(reroll::UndoArgs),
    /// The series as a mail package: cover letter and patches (Markdown, mbox for `git am`, JSON)
    Format(format::FormatArgs),
    /// Review the series in your editor: `R:` comments under `### Patch [n/total] ###` headers
    Review(review::ReviewArgs),
    /// Record the series as its next version on refs/jules/series/PERSONA/NAME (series format does too)
    Version(version::VersionArgs),
    /// List the recorded versions of PERSONA/NAME, from any clone that synced
    Versions(version::VersionsArgs),
    /// Show one version of PERSONA/NAME[@vN]: base, patches, change ids, cover letter
    Show(version::ShowArgs),
    /// Compare two versions of a series patch by patch, paired as `git range-diff` pairs them
    RangeDiff(version::RangeDiffArgs),
    /// The diff between two versions' final trees
    Interdiff(version::InterdiffArgs),
    /// Verify the series, land it on its base, delete the staging branch and check out the base
    Finalize(finalize::FinalizeArgs),
    /// Delete the staging branch and its config (tip kept as a backup) and return to the base
    Abort(finalize::AbortArgs),
}

pub fn run(ctx: &Context, cmd: SeriesCommand) -> anyhow::Result<i32> {
    match cmd {
        SeriesCommand::Start(a) => start::start(ctx, a),
        SeriesCommand::Commit(a) => start::commit(ctx, a),
        SeriesCommand::Status(a) => status::status(ctx, a),
        SeriesCommand::List(a) => status::list(ctx, a),
        SeriesCommand::Reroll(a) => reroll::reroll(ctx, a),
        SeriesCommand::Undo(a) => reroll::undo(ctx, a),
        SeriesCommand::Format(a) => format::run(ctx, a),
        SeriesCommand::Review(a) => review::run(ctx, a),
        SeriesCommand::Version(a) => version::record(ctx, a),
        SeriesCommand::Versions(a) => version::versions(ctx, a),
        SeriesCommand::Show(a) => version::show(ctx, a),
        SeriesCommand::RangeDiff(a) => version::range_diff(ctx, a),
        SeriesCommand::Interdiff(a) => version::interdiff(ctx, a),
        SeriesCommand::Finalize(a) => finalize::finalize(ctx, a),
        SeriesCommand::Abort(a) => finalize::abort(ctx, a),
    }
}
