//! What one round sees: every shared ref with its local value, the remote's shared value and the remote's
//! writer refs of it, read from the local refs and the remote-tracking refs the fetch wrote; and the remote
//! refs left aside (not commits, not logs).

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::report::Skipped;
use super::writer_refs::{shared_of_writer, tracking_prefixes};
use crate::kit::error::{Error, Result};
use crate::store::eventlog::Log;
use crate::store::refs::{object_kind, WRITERS};

/// One shared ref as this round sees it.
#[derive(Default)]
pub(super) struct Seen {
    pub local: Option<ObjectId>,
    pub main: Option<ObjectId>,
    /// What the remote's shared ref holds when that is not a commit (the lease to replace it under).
    pub main_other: Option<ObjectId>,
    /// The remote's writer refs of this shared ref: (name on the remote, tip).
    pub writers: Vec<(String, ObjectId)>,
}

/// One shared ref of a round, as the steps that decide it take it: the repository, its name, and its log
/// (`None` for a notes ref).
#[derive(Clone, Copy)]
pub(super) struct Ref<'r, 'l> {
    pub repo: &'r gix::Repository,
    pub name: &'r str,
    pub log: Option<&'l Log<'r>>,
}

/// What one round sees.
#[derive(Default)]
pub(super) struct View {
    pub seen: BTreeMap<String, Seen>,
    /// Remote refs under `refs/jules/*` or `refs/notes/jules/*` that do not point at a commit.
    pub skipped: Vec<Skipped>,
}

/// The refs under `prefix` that point at an object directly, with their targets.
pub(super) fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(prefix)? {
        let r = r.map_err(|e| Error::wrap(format!("listing {prefix}"), e))?;
        if let Some(id) = r.target().try_id() {
            out.push((r.name().as_bstr().to_string(), id.to_owned()));
        }
    }
    Ok(out)
}

/// The view of round `round` of a sync with `remote`. Round 1, the first after a fetch, adds to `pruned`
/// the remote-tracking refs of `tracked_before` the fetch removed.
pub(super) fn look(
    repo: &gix::Repository,
    remote: &str,
    round: u32,
    tracked_before: &BTreeSet<String>,
    pruned: &mut Vec<String>,
) -> Result<View> {
    let mut view = View::default();
    for (tracking_prefix, local_prefix) in tracking_prefixes(remote) {
        let tracked = list(repo, &tracking_prefix)?;
        if round == 1 {
            pruned.extend(
                tracked_before
                    .iter()
                    .filter(|n| n.starts_with(&tracking_prefix))
                    .filter(|n| !tracked.iter().any(|(t, _)| t == *n))
                    .cloned(),
            );
        }
        for (tracking, id) in tracked {
            let rest = &tracking[tracking_prefix.len()..];
            see_remote(repo, &mut view, local_prefix, rest, id);
        }
        see_local(repo, &mut view, local_prefix)?;
    }
    Ok(view)
}

/// Take in the remote ref `<local_prefix><rest>`, found at `id` in its remote-tracking ref.
fn see_remote(
    repo: &gix::Repository,
    view: &mut View,
    local_prefix: &str,
    rest: &str,
    id: ObjectId,
) {
    let seen = &mut view.seen;
    let remote_name = format!("{local_prefix}{rest}");
    if rest.starts_with("backup/") {
        return;
    }
    // Series versions: not logs (see `sync_with`).
    if rest.starts_with("series/") {
        return;
    }
    match object_kind(repo, id) {
        Some(gix::object::Kind::Commit) => {}
        kind => {
            if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
                seen.entry(remote_name.clone()).or_default().main_other = Some(id);
            }
            view.skipped.push(Skipped {
                reason: match kind {
                    Some(k) => format!("points at a {k} ({id}), not a commit"),
                    None => format!("points at {id}, which is missing"),
                },
                name: remote_name,
            });
            return;
        }
    }
    if local_prefix == "refs/jules/" && !crate::store::eventlog::holds_log_history(repo, id) {
        // Not a log: no event and no join anywhere in its history (a branch named jules/..., or
        // a remote that lost its log to an unrelated history). Never joined; a local log of that
        // name is published again over it, which loses nothing: it holds no event.
        if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
            seen.entry(remote_name).or_default().main_other = Some(id);
        }
        return;
    }
    match shared_of_writer(&remote_name) {
        Some((shared, _)) => seen
            .entry(shared)
            .or_default()
            .writers
            .push((remote_name, id)),
        None if rest.starts_with(WRITERS) => {}
        None => seen.entry(remote_name).or_default().main = Some(id),
    }
}

/// Take in the local refs under `local_prefix` (logs and notes; not backups, writer refs or series).
fn see_local(repo: &gix::Repository, view: &mut View, local_prefix: &str) -> Result<()> {
    for (name, id) in list(repo, local_prefix)? {
        let rest = &name[local_prefix.len()..];
        if rest.starts_with("backup/") || rest.starts_with(WRITERS) {
            continue;
        }
        // Series versions: not logs (see `sync_with`).
        if rest.starts_with("series/") {
            continue;
        }
        if object_kind(repo, id) != Some(gix::object::Kind::Commit) {
            view.skipped.push(Skipped {
                name,
                reason: format!("the local ref points at {id}, which is not a commit"),
            });
            continue;
        }
        view.seen.entry(name).or_default().local = Some(id);
    }
    Ok(())
}
