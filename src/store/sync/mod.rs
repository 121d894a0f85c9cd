//! `git jules sync`: fetch the remote's logs and notes, take the union, publish it without fighting over a ref.
//!
//! The remote is the only server. Layout version 2 (see `docs/format.md`): every shared ref `R`
//! (`refs/jules/<log>`, `refs/notes/jules/<name>`) has, next to it, per-writer refs
//! `<prefix>writers/<name>/<writer-id>` that only one clone ever moves. The true content of `R` on the remote
//! is the union of `R` and its writer refs.
//!
//! One round: fetch everything (the `git` binary, so every transport and credential setting of the user
//! applies), join the local ref with the remote's `R` and every writer ref (union; merge commits only where
//! histories diverged), move the local ref, then publish:
//!
//! 1. *fold*: one atomic push moving `R` to the union under a lease on the fetched value and deleting, under
//!    leases, the writer refs the union contains. When it lands, the remote holds everything in `R` and no
//!    writer refs: the number of refs stays bounded however many sandboxes came and went.
//! 2. when the fold's lease was stale (somebody else folded first: harmless), push the union to this clone's
//!    own writer ref, which nobody else moves, so it cannot lose a race. Its events are on the remote, and
//!    the next fold (by anyone) takes them into `R` and deletes the writer ref.
//!
//! So a sync needs one round and at most two pushes, however many clones sync at once; further rounds happen
//! only when the writer ref itself was deleted in between (its content folded) or the local ref moved.
//!
//! The files, by concern:
//!
//! - `view`: what a round sees (local refs, the remote's shared and writer refs, refs left aside);
//! - `join`: the union of one ref, and moving the local ref to it;
//! - `news`: no push without news, and its memo;
//! - `plan`: one round's decisions, ref by ref (join, news, what to publish, what to report);
//! - `publish`: the pushes (fold, then this clone's writer ref) under the push budget;
//! - `rounds`: the round loop;
//! - `no_loss`: the check before every push that nothing the remote holds is lost;
//! - `transport`: the `git` fetch and push;
//! - `ledger`: the push budget and the ledger of this clone's last push;
//! - `writer_refs`: the names of writer refs and remote-tracking refs;
//! - `report`: what a sync reports.

mod join;
mod ledger;
mod news;
mod no_loss;
mod plan;
mod publish;
mod report;
mod rounds;
#[cfg(test)]
mod tests;
mod transport;
mod view;
mod writer_refs;

use gix::remote::Direction;
use gix::ObjectId;

use crate::kit::error::{Error, Result};

pub use crate::store::refs::{object_kind, WRITERS};
pub use ledger::PushPolicy;
pub use report::{Action, Published, RefSync, Skipped, SyncReport};
pub use transport::{fetch, reopen};
pub use writer_refs::{shared_of_writer, tracking_name, writer_id, writer_ref};

/// The remote to use when none is named: the coordination remote (`jules.remote`, set by
/// `git jules init --remote NAME`) when there is one, else the current branch's remote, else `origin`, else
/// the only one.
pub fn default_remote(repo: &gix::Repository) -> Result<String> {
    if let Some(name) = repo.config_snapshot().string("jules.remote") {
        let name = name.to_string();
        if !repo.remote_names().iter().any(|n| *n == name) {
            return Err(Error::usage(format!(
                "jules.remote names {name:?}, which is not a configured remote (`git remote -v` lists them)"
            )));
        }
        return Ok(name);
    }
    if let Some(Ok(name)) = repo
        .head_name()
        .ok()
        .flatten()
        .and_then(|h| repo.branch_remote_name(h.shorten(), Direction::Push))
        .map(|n| n.as_symbol().map(str::to_owned).ok_or(()))
    {
        return Ok(name);
    }
    let names: Vec<String> = repo.remote_names().iter().map(|n| n.to_string()).collect();
    if names.iter().any(|n| n == "origin") {
        return Ok("origin".into());
    }
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::usage(
            "no remote configured: add one with `git remote add origin URL`",
        )),
        _ => Err(Error::usage(format!(
            "several remotes and none is `origin`: name one ({})",
            names.join(", ")
        ))),
    }
}

/// Synchronise every jules log and notes ref with `remote`: afterwards the remote holds every local event and
/// the local refs hold every event the remote had.
pub fn sync(repo: &gix::Repository, remote: &str) -> Result<SyncReport> {
    sync_with(repo, remote, &PushPolicy::default())
}

/// A sync as the repository configures it: with `remote`, else the coordination remote
/// ([`default_remote`]), under the configured push policy (`now`: push even if the interval has not run
/// out). What `git jules sync` and the MCP server's `mail_sync` do.
pub fn sync_configured(
    repo: &gix::Repository,
    remote: Option<&str>,
    now: bool,
) -> Result<SyncReport> {
    let remote = match remote {
        Some(r) => r.to_owned(),
        None => default_remote(repo)?,
    };
    let mut policy = PushPolicy::from_config(repo)?;
    policy.now = now;
    sync_with(repo, &remote, &policy)
}

/// [`sync`] under a push policy: with news and a push interval that has not run out (and nothing urgent in
/// the news), the sync fetches and joins but pushes nothing, and says when it may.
pub fn sync_with(repo: &gix::Repository, remote: &str, policy: &PushPolicy) -> Result<SyncReport> {
    // Before the name reaches a ref path (refs/remotes/<remote>/…), where gix refuses it as an internal error.
    if !repo.remote_names().iter().any(|n| *n == remote) {
        return Err(Error::not_found(crate::kit::error::Thing::Remote, remote));
    }
    let mut report = rounds::sync_logs(repo, remote, policy)?;
    crate::store::heldback::remember(repo, &report.held_back);
    // Series versions (refs/jules/series/*, issue 26) are not logs: one persona writes each ref, so they are
    // pushed as they are (src/store/version_refs.rs), the fetch brought others', and the log machinery skipped them.
    // They spend the push budget like the logs: pushed when this sync pushed its logs (news, urgent or not,
    // or `--now`) or when the interval has run out, else left for the next sync allowed to push.
    let pending = crate::store::version_refs::pending(repo, remote)?;
    if pending.is_empty() {
        return Ok(report);
    }
    let logs_pushed = report
        .refs
        .iter()
        .any(|r| r.published != Published::Nothing);
    match policy.wait(repo).filter(|_| !logs_pushed) {
        Some(wait) => {
            report.push_deferred_secs = Some(
                report
                    .push_deferred_secs
                    .unwrap_or_else(|| wait.as_secs().max(1)),
            );
            report.series_deferred = pending.into_iter().map(|p| p.name).collect();
        }
        None => {
            let done = crate::store::version_refs::publish(repo, remote, &pending)?;
            if !done.pushed.is_empty() || !done.refused.is_empty() {
                // One more push on top of what the logs spent in this sync.
                ledger::remember_push(repo, report.push_attempts + 1);
            }
            report.series_pushed = done.pushed;
            report.series_refused = done.refused;
        }
    }
    Ok(report)
}

/// Push `new` to the remote's `name` only if the remote still has `expected` there (`None`: absent), then
/// record it in the remote-tracking ref as a fetch would. `Ok(false)` when the lease was stale.
///
/// This is the compare-and-swap on the remote ref that protocols such as mail claims build on; unlike
/// [`sync`] it never joins, so the remote accepts exactly the commit it is given or nothing.
pub fn push_leased(
    repo: &gix::Repository,
    remote: &str,
    name: &str,
    new: ObjectId,
    expected: Option<ObjectId>,
) -> Result<bool> {
    let update = [(name.to_owned(), Some(new), expected)];
    no_loss::check_no_loss(repo, &update, &|_| None)?;
    if !transport::push(repo, remote, &update)? {
        return Ok(false);
    }
    transport::record(repo, remote, &update);
    Ok(true)
}
