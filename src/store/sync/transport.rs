//! The fence around the `git` binary for the network: fetch, the leased atomic push (with the remote's
//! refusal kept for [`crate::store::heldback`] to read), recording a push in the remote-tracking refs, and a fresh
//! handle on the repository after a fetch (`reopen`). gix 0.90 has no push and is built without an http
//! client; `git` reaches every transport and setting the user's own `git fetch` reaches
//! (`docs/architecture.md`, "Why the git binary for fetch").

use std::collections::BTreeSet;

use gix::ObjectId;

use super::writer_refs::tracking_name;
use crate::kit::error::{Error, Result};
use crate::store::refs;

/// One ref of an atomic push: its name, the new value (`None`: delete) and the leased expected value.
pub(super) type Update = (String, Option<ObjectId>, Option<ObjectId>);

/// Fetch the remote's jules refs into remote-tracking refs, pruning those the remote no longer has.
///
/// The `git` binary, not gix: it is the reference for every transport and every setting users rely on to
/// reach a remote (https with credential helpers, `http.extraHeader`, proxies, `url.*.insteadOf`, ssh with
/// `GIT_SSH_COMMAND`/`core.sshCommand`, `git://`, local paths); the gix build carries no http client, and
/// one process per fetch costs little next to the network round trip (see `docs/architecture.md`).
/// Afterwards [`crate::store::hygiene::maintain`] keeps packs and loose objects bounded, and
/// [`crate::store::hygiene::drop_log_reflogs`] removes the log reflogs older builds forced.
pub fn fetch(repo: &gix::Repository, remote: &str) -> Result<()> {
    repo.find_remote(remote)
        .map_err(|_| Error::not_found(crate::kit::error::Thing::Remote, remote))?;
    let specs = [
        format!("+refs/jules/*:refs/remotes/{remote}/jules/*"),
        format!("+refs/notes/jules/*:refs/remotes/{remote}/notes/jules/*"),
    ];
    // Tell the remote what we have from the logs' own refs and HEAD only: by default git offers commits from
    // every ref, newest first, and in a clone full of recent branches the remote must read through them in
    // several stateless round trips (each a new upload-pack over http) before it finds the logs' common
    // history; `bench/sync.sh`'s second round paid that (issue 29). HEAD stays, so that series versions
    // (whose history is code) still meet what the clone has of the code.
    // Only tips that exist: git warns about a glob that matches nothing and fails on an unborn HEAD. With none
    // at all (a fresh clone with no commit), git offers what it has, as by default.
    let mut negotiation: Vec<String> = [
        "refs/jules/".to_owned(),
        "refs/notes/jules/".to_owned(),
        format!("refs/remotes/{remote}/jules/"),
        format!("refs/remotes/{remote}/notes/jules/"),
    ]
    .into_iter()
    .filter(|prefix| has_refs(repo, prefix))
    .map(|prefix| format!("--negotiation-tip={prefix}*"))
    .collect();
    if repo.head_id().is_ok() {
        negotiation.push("--negotiation-tip=HEAD".to_owned());
    }
    let out = crate::kit::gitcli::command(crate::kit::gitcli::dir_of(repo))
        .args([
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--no-recurse-submodules",
        ])
        .args(&negotiation)
        .arg(remote)
        .args(&specs)
        .output()
        .map_err(|e| Error::io("running `git fetch` (is git on PATH?)", e))?;
    if !out.status.success() {
        return Err(remote_error(remote, "fetch from", &out.stderr));
    }
    crate::store::hygiene::maintain(repo)?;
    crate::store::hygiene::drop_log_reflogs(repo)?;
    Ok(())
}

/// Whether any ref is named under `prefix`.
fn has_refs(repo: &gix::Repository, prefix: &str) -> bool {
    repo.references()
        .ok()
        .and_then(|r| {
            r.prefixed(prefix)
                .ok()
                .map(|mut refs| refs.next().is_some())
        })
        .unwrap_or(false)
}

/// A failure to reach `remote`, named, with git's own reason (credentials, network, missing repository).
pub(super) fn remote_error(remote: &str, what: &str, stderr: &[u8]) -> Error {
    let text = String::from_utf8_lossy(stderr);
    let reason: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("fatal: ").unwrap_or(l))
        .collect();
    if reason.is_empty() {
        // git failed for no reason it gave: not something the user can fix (exit 4).
        return Error::Other(format!(
            "cannot {what} remote {remote}: git failed without saying why"
        ));
    }
    // Credentials, an unreachable host, a missing repository: the user fixes those (exit 2).
    Error::Refused(format!(
        "cannot {what} remote {remote}: {}",
        reason.join("; ")
    ))
}

/// A fresh handle on the same repository: its object store sees the packs on disk now, so a long run of
/// fetches and repacks never exhausts the slots of a store sized when the process started.
pub fn reopen(repo: &gix::Repository) -> Result<gix::Repository> {
    let mut fresh = gix::open_opts(repo.path(), repo.open_options().clone())
        .map_err(|e| Error::wrap(format!("reopening {}", repo.path().display()), e))?;
    fresh.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(fresh)
}

/// Record in the remote-tracking refs what a successful push did, as the next fetch would.
pub(super) fn record(repo: &gix::Repository, remote: &str, updates: &[Update]) {
    for (name, new, _) in updates {
        let tracking = tracking_name(remote, name);
        let old = refs::target(repo, &tracking).ok().flatten();
        match (new, old) {
            (Some(new), old) => {
                let _ = refs::cas(repo, &tracking, old, *new, "jules: sync push");
            }
            (None, Some(old)) => {
                let _ = refs::cas_delete(repo, &tracking, old);
            }
            (None, None) => {}
        }
    }
}

/// One atomic push of `updates` (name, new value or `None` to delete, leased expected value); `Ok(false)` when
/// a lease was stale (somebody pushed in between) and nothing changed.
///
/// Shells out: gix 0.90 has no push (no send-pack client), and the git binary reaches every transport.
pub(super) fn push(repo: &gix::Repository, remote: &str, updates: &[Update]) -> Result<bool> {
    push_or_refusal(repo, remote, updates, Atomicity::All)?
        .map(|landed| !landed.is_empty())
        .map_err(|text| remote_error(remote, "push to", text.as_bytes()))
}

/// Whether a push lands all its refs or none, or each ref on its own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Atomicity {
    /// `git push --atomic`: every ref moves or none does.
    All,
    /// Each ref moves or not on its own lease (a plain `git push`).
    EachRef,
}

/// [`push_or_refusal`], with a refusal of events the remote names (its guard) learned by `gate`: `None`
/// when the round must be built again without them, held back; any other refusal is the sync's error.
/// `Some` holds the names of the refs that moved: all or none of them under [`Atomicity::All`]; none
/// when every lease was stale.
pub(super) fn push_gated(
    repo: &gix::Repository,
    remote: &str,
    updates: &[Update],
    atomicity: Atomicity,
    gate: &mut crate::store::heldback::Gate,
) -> Result<Option<BTreeSet<String>>> {
    match push_or_refusal(repo, remote, updates, atomicity)? {
        Ok(landed) => Ok(Some(landed)),
        Err(text) if gate.learn(repo, &text)? => Ok(None),
        Err(text) => Err(remote_error(remote, "push to", text.as_bytes())),
    }
}

/// Whether ref `to` was not moved because somebody moved it first, as `git push --porcelain` words it
/// (`line`) with the remote's own words (`stderr`): a lease stale in the advertisement, the atomic push's
/// other refs, a lock another push holds, or (ref by ref) a lease that went stale on the server after the
/// advertisement, where receive-pack says only "failed to update ref" on the line and why on stderr
/// ("cannot lock ref '<to>': is at X but expected Y", or "reference already exists" for a ref leased
/// absent). Every other reason is the remote's refusal (a hook, a permission, a full disk).
pub(super) fn lost_a_race(line: &str, to: &str, stderr: &str) -> bool {
    [
        "stale info",
        "fetch first",
        "non-fast-forward",
        "atomic",
        "failed to lock",
        "cannot lock ref",
    ]
    .iter()
    .any(|reason| line.contains(reason))
        || (line.contains("failed to update ref")
            && stderr.contains(&format!("cannot lock ref '{to}':")))
}

/// Push `updates`; `Ok(Ok(landed))` names the refs that moved (those whose lease was stale did not), and
/// `Ok(Err(text))` is a refusal given back as git's and the remote's words (the refused lines, then
/// stderr), for the caller to read before it becomes an error.
fn push_or_refusal(
    repo: &gix::Repository,
    remote: &str,
    updates: &[Update],
    atomicity: Atomicity,
) -> Result<std::result::Result<BTreeSet<String>, String>> {
    let mut args: Vec<String> = vec!["push".into(), "--porcelain".into(), "--no-verify".into()];
    if atomicity == Atomicity::All {
        args.push("--atomic".into());
    }
    for (name, _, expected) in updates {
        args.push(format!(
            "--force-with-lease={name}:{}",
            expected.map(|e| e.to_string()).unwrap_or_default()
        ));
    }
    args.push(remote.into());
    for (name, new, _) in updates {
        match new {
            Some(new) => args.push(format!("{new}:{name}")),
            None => args.push(format!(":{name}")),
        }
    }
    let out = crate::kit::gitcli::command(crate::kit::gitcli::dir_of(repo))
        .args(&args)
        .output()
        .map_err(|e| Error::io("running `git push`", e))?;
    if out.status.success() {
        return Ok(Ok(updates
            .iter()
            .map(|(name, _, _)| name.clone())
            .collect()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `--porcelain` prints a line per ref: `<flag>\t<from>:<to>\t<summary>`, the flag `!` when it did not move.
    let per_ref: Vec<(bool, &str, &str)> = stdout
        .lines()
        .filter_map(|l| {
            let mut fields = l.splitn(3, '\t');
            let flag = fields.next()?;
            let (_, to) = fields.next()?.split_once(':')?;
            Some((flag != "!", to, l))
        })
        .filter(|(_, to, _)| updates.iter().any(|(name, _, _)| name == to))
        .collect();
    let (mut raced, mut refused) = (stderr.contains("stale info"), false);
    for (_, to, line) in per_ref.iter().filter(|(moved, _, _)| !moved) {
        if lost_a_race(line, to, &stderr) {
            raced = true;
        } else {
            refused = true;
        }
    }
    if raced && !refused {
        return Ok(Ok(per_ref
            .iter()
            .filter(|(moved, _, _)| *moved)
            .map(|(_, to, _)| (*to).to_owned())
            .collect()));
    }
    let mut text: String = stdout
        .lines()
        .filter(|l| l.starts_with('!'))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&stderr);
    Ok(Err(text))
}
