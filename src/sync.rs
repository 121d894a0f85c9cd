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

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gix::remote::Direction;
use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::eventlog::{Log, MergeOutcome};
use crate::refs;

const MAX_ROUNDS: u32 = 20;

pub use crate::refs::{object_kind, WRITERS};

/// What happened to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    UpToDate,
    /// The remote had it and we did not.
    Created,
    /// The remote was ahead; we moved forward.
    FastForwarded,
    /// We were ahead; we pushed.
    Pushed,
    /// The remote had lost the log (deleted, replaced, or not a commit): our copy was pushed again.
    Republished,
    /// Both had news: joined (a merge commit) and pushed.
    Merged,
}

impl Action {
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::UpToDate => "up-to-date",
            Action::Created => "created",
            Action::FastForwarded => "fast-forwarded",
            Action::Pushed => "pushed",
            Action::Republished => "republished",
            Action::Merged => "merged",
        }
    }
}

/// Where a sync published a ref's union.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Published {
    /// Nothing needed publishing.
    Nothing,
    /// The shared ref itself (the fold landed).
    Shared,
    /// This clone's writer ref (somebody else folded first).
    Writer,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefSync {
    pub name: String,
    pub action: Action,
    pub tip: String,
    pub published: Published,
}

/// A remote ref that was not used, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct SyncReport {
    pub remote: String,
    pub rounds: u32,
    pub refs: Vec<RefSync>,
    /// Writer refs deleted on the remote because the shared ref now holds their events.
    pub folded: usize,
    /// Remote refs under `refs/jules/*` or `refs/notes/jules/*` that do not point at a commit.
    pub skipped: Vec<Skipped>,
    /// Remote-tracking refs removed because the remote no longer has them.
    pub pruned: Vec<String>,
    /// Commits taken in from the remote that are not valid events (readers skip them; `log fsck` names them).
    pub invalid: Vec<Skipped>,
}

impl SyncReport {
    pub fn changed(&self) -> bool {
        self.refs.iter().any(|r| r.action != Action::UpToDate)
    }
}

/// The remote to use when none is named: the current branch's remote, else `origin`, else the only one.
pub fn default_remote(repo: &gix::Repository) -> Result<String> {
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

fn tracking_prefixes(remote: &str) -> [(String, &'static str); 2] {
    [
        (format!("refs/remotes/{remote}/jules/"), "refs/jules/"),
        (
            format!("refs/remotes/{remote}/notes/jules/"),
            "refs/notes/jules/",
        ),
    ]
}

/// This clone's writer id (16 hex digits), made once and kept in `.git/jules/writer-id`. Losing the file only
/// means a new writer ref next time; the old one is folded and deleted like any other.
pub fn writer_id(repo: &gix::Repository) -> Result<String> {
    let dir = crate::repo::jules_dir(repo);
    let path = dir.join("writer-id");
    let valid = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Ok(text) = std::fs::read_to_string(&path) {
        if valid(text.trim()) {
            return Ok(text.trim().to_owned());
        }
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let id: String = crate::eventlog::event::fresh_nonce()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    let id = format!("{id:0>16}");
    // Write aside, then link into place: concurrent first syncs agree on whichever id landed first.
    let tmp = dir.join(format!("writer-id.{}.tmp", std::process::id()));
    std::fs::write(&tmp, format!("{id}\n")).map_err(|e| Error::io("writing the writer id", e))?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(id),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if valid(text.trim()) {
                Ok(text.trim().to_owned())
            } else {
                Err(Error::Other(format!(
                    "{} does not hold a writer id; remove it and sync again",
                    path.display()
                )))
            }
        }
        Err(e) => Err(Error::io(format!("creating {}", path.display()), e)),
    }
}

/// The writer ref of `shared` (`refs/jules/mail` or `refs/notes/jules/x`) for `writer`.
pub fn writer_ref(shared: &str, writer: &str) -> String {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = shared.strip_prefix(prefix) {
            return format!("{prefix}{WRITERS}{rest}/{writer}");
        }
    }
    format!("{shared}/{WRITERS}{writer}")
}

/// The shared ref and writer id of a writer ref name, `None` if `name` is not one.
pub fn shared_of_writer(name: &str) -> Option<(String, &str)> {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let (log, writer) = rest.strip_prefix(WRITERS)?.rsplit_once('/')?;
            return (!log.is_empty() && !writer.is_empty())
                .then(|| (format!("{prefix}{log}"), writer));
        }
    }
    None
}

/// Fetch the remote's jules refs into remote-tracking refs, pruning those the remote no longer has.
///
/// The `git` binary, not gix: it is the reference for every transport and every setting users rely on to
/// reach a remote (https with credential helpers, `http.extraHeader`, proxies, `url.*.insteadOf`, ssh with
/// `GIT_SSH_COMMAND`/`core.sshCommand`, `git://`, local paths); the gix build carries no http client, and
/// one process per fetch costs little next to the network round trip (see `docs/architecture.md`).
/// Afterwards [`crate::hygiene::maintain`] keeps packs and loose objects bounded, and
/// [`crate::hygiene::drop_log_reflogs`] removes the log reflogs older builds forced.
pub fn fetch(repo: &gix::Repository, remote: &str) -> Result<()> {
    repo.find_remote(remote)
        .map_err(|_| Error::not_found("remote", remote))?;
    let specs = [
        format!("+refs/jules/*:refs/remotes/{remote}/jules/*"),
        format!("+refs/notes/jules/*:refs/remotes/{remote}/notes/jules/*"),
    ];
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args([
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--no-recurse-submodules",
            remote,
        ])
        .args(&specs)
        .output()
        .map_err(|e| Error::io("running `git fetch` (is git on PATH?)", e))?;
    if !out.status.success() {
        return Err(remote_error(remote, "fetch from", &out.stderr));
    }
    crate::hygiene::maintain(repo)?;
    crate::hygiene::drop_log_reflogs(repo)?;
    Ok(())
}

/// A failure to reach `remote`, named, with git's own reason (credentials, network, missing repository).
fn remote_error(remote: &str, what: &str, stderr: &[u8]) -> Error {
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

fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(prefix)? {
        let r = r.map_err(|e| Error::Other(format!("listing {prefix}: {e}")))?;
        if let Some(id) = r.target().try_id() {
            out.push((r.name().as_bstr().to_string(), id.to_owned()));
        }
    }
    Ok(out)
}

/// A fresh handle on the same repository: its object store sees the packs on disk now, so a long run of
/// fetches and repacks never exhausts the slots of a store sized when the process started.
pub fn reopen(repo: &gix::Repository) -> Result<gix::Repository> {
    let mut fresh = gix::open_opts(repo.path(), repo.open_options().clone())
        .map_err(|e| Error::Other(format!("reopening {}: {e}", repo.path().display())))?;
    fresh.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(fresh)
}

/// One shared ref as this round sees it.
#[derive(Default)]
struct Seen {
    local: Option<ObjectId>,
    main: Option<ObjectId>,
    /// What the remote's shared ref holds when that is not a commit (the lease to replace it under).
    main_other: Option<ObjectId>,
    /// The remote's writer refs of this shared ref: (name on the remote, tip).
    writers: Vec<(String, ObjectId)>,
}

type Update = (String, Option<ObjectId>, Option<ObjectId>);

/// Synchronise every jules log and notes ref with `remote`: afterwards the remote holds every local event and
/// the local refs hold every event the remote had.
pub fn sync(repo: &gix::Repository, remote: &str) -> Result<SyncReport> {
    // Series versions (refs/jules/series/*, issue 26) are not logs: one persona writes each ref, so they are
    // pushed as they are (src/series_refs.rs), the fetch below brings others', and the log machinery
    // skips them. Refs the remote refused are not in the report yet (it has no field for them).
    let _refused = crate::series_refs::publish(repo, remote)?;
    let me = writer_id(repo)?;
    let tracked_before: BTreeSet<String> = tracking_prefixes(remote)
        .iter()
        .map(|(p, _)| list(repo, p))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .map(|(n, _)| n)
        .collect();
    let mut results: BTreeMap<String, RefSync> = BTreeMap::new();
    let mut pruned = Vec::new();
    let mut folded = 0;
    let mut invalid: Vec<Skipped> = Vec::new();
    // Round 0 fetches nothing: it takes what the remote-tracking refs already hold (a plain `git fetch`
    // wrote them) into the local refs, so that pruning them in round 1 can not drop an event from the view.
    for round in 0..=MAX_ROUNDS {
        if round > 0 {
            fetch(repo, remote)?;
        }
        let fresh = reopen(repo)?;
        let repo = &fresh;
        let mut skipped = Vec::new();
        let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
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
                let remote_name = format!("{local_prefix}{rest}");
                if rest.starts_with("backup/") {
                    continue;
                }
                // Series versions: not logs (see the top of this function).
                if rest.starts_with("series/") {
                    continue;
                }
                match object_kind(repo, id) {
                    Some(gix::object::Kind::Commit) => {}
                    kind => {
                        if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
                            seen.entry(remote_name.clone()).or_default().main_other = Some(id);
                        }
                        skipped.push(Skipped {
                            reason: match kind {
                                Some(k) => format!("points at a {k} ({id}), not a commit"),
                                None => format!("points at {id}, which is missing"),
                            },
                            name: remote_name,
                        });
                        continue;
                    }
                }
                if local_prefix == "refs/jules/" && !crate::eventlog::is_log_commit(repo, id) {
                    // Not a log (a branch named jules/..., or a remote that lost its log to an unrelated
                    // commit): never joined. A local log of that name is published again over it.
                    if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
                        seen.entry(remote_name).or_default().main_other = Some(id);
                    }
                    continue;
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
            for (name, id) in list(repo, local_prefix)? {
                let rest = &name[local_prefix.len()..];
                if rest.starts_with("backup/") || rest.starts_with(WRITERS) {
                    continue;
                }
                // Series versions: not logs (see the top of this function).
                if rest.starts_with("series/") {
                    continue;
                }
                if object_kind(repo, id) != Some(gix::object::Kind::Commit) {
                    skipped.push(Skipped {
                        name,
                        reason: format!("the local ref points at {id}, which is not a commit"),
                    });
                    continue;
                }
                seen.entry(name).or_default().local = Some(id);
            }
        }

        let mut fold: Vec<Update> = Vec::new();
        let mut own: Vec<Update> = Vec::new();
        let mut round_results = Vec::new();
        let mut local_race = false;
        for (name, s) in &seen {
            let is_notes = name.starts_with("refs/notes/jules/");
            let log = if is_notes {
                None
            } else {
                Some(Log::open(repo, name)?)
            };
            let mut tip = s.local;
            let mut merged = false;
            for r in s.main.iter().chain(s.writers.iter().map(|(_, id)| id)) {
                tip = Some(match tip {
                    None => *r,
                    Some(t) => {
                        let outcome = match &log {
                            // Ours holds no event theirs lacks (only joins shaped differently): take theirs,
                            // so that replicas settle on one tip instead of merging merges.
                            Some(log) => match log.join(t, *r)? {
                                MergeOutcome::Merged(m) if !log.events_contained(t, *r)? => {
                                    MergeOutcome::Merged(m)
                                }
                                MergeOutcome::Merged(_) => MergeOutcome::FastForward(*r),
                                other => other,
                            },
                            None => join_notes(repo, t, *r)?,
                        };
                        if let MergeOutcome::Merged(_) = outcome {
                            merged = true;
                        }
                        outcome.tip()
                    }
                });
            }
            let Some(tip) = tip else { continue };
            if let (Some(log), true) = (&log, Some(tip) != s.local) {
                let hidden: Vec<ObjectId> = s.local.into_iter().collect();
                for bad in log.scan(&[tip], &hidden, false)?.invalid {
                    if !invalid
                        .iter()
                        .any(|i| i.name.parse::<ObjectId>().ok() == Some(bad.commit))
                    {
                        invalid.push(Skipped {
                            name: bad.commit.to_string(),
                            reason: format!("{name}: {}", bad.reason),
                        });
                    }
                }
            }
            if Some(tip) != s.local && !refs::cas(repo, name, s.local, tip, "jules: sync")? {
                if let Some(err) = refs::stale_lock_error(repo, name) {
                    // A lock file left by a killed process: the user removes it (exit 2).
                    return Err(Error::Refused(err.to_string()));
                }
                local_race = true;
            }
            for (writer, id) in &s.writers {
                fold.push((writer.clone(), None, Some(*id)));
            }
            let publish = Some(tip) != s.main;
            if publish {
                fold.push((name.clone(), Some(tip), s.main.or(s.main_other)));
                let mine = writer_ref(name, &me);
                let current = s
                    .writers
                    .iter()
                    .find(|(n, _)| *n == mine)
                    .map(|(_, id)| *id);
                // Our own writer ref is only needed when the remote lacks something of ours: when a ref
                // there already contains the local copy, a lost fold leaves nothing unpublished.
                if !published_already(repo, s.local, current, s)? {
                    own.push((mine, Some(tip), current));
                }
            }
            let lost = s.main.is_none()
                && (tracked_before.contains(&tracking_name(remote, name))
                    || s.main_other.is_some());
            let action = if s.local.is_none() {
                Action::Created
            } else if merged && publish {
                Action::Merged
            } else if Some(tip) != s.local {
                Action::FastForwarded
            } else if publish && lost {
                Action::Republished
            } else if publish {
                Action::Pushed
            } else {
                Action::UpToDate
            };
            round_results.push(RefSync {
                name: name.clone(),
                action,
                tip: tip.to_string(),
                published: Published::Nothing,
            });
        }
        // Keep the strongest action seen per ref across rounds: a ref merged in round 1 whose join was pushed
        // in round 2 was merged, not pushed.
        for r in round_results {
            // Round 0 only moved local refs; what it would publish is decided after a fetch.
            if round == 0
                && matches!(
                    r.action,
                    Action::UpToDate | Action::Pushed | Action::Republished
                )
            {
                continue;
            }
            match results.get_mut(&r.name) {
                Some(x) => {
                    x.tip = r.tip;
                    x.action = x.action.max(r.action);
                }
                None => {
                    results.insert(r.name.clone(), r);
                }
            }
        }
        let report = |results: BTreeMap<String, RefSync>, folded, skipped| SyncReport {
            remote: remote.to_owned(),
            rounds: round,
            refs: results.into_values().collect(),
            folded,
            skipped,
            pruned: pruned.clone(),
            invalid: invalid.clone(),
        };
        if local_race || round == 0 {
            continue;
        }
        if fold.is_empty() {
            return Ok(report(results, folded, skipped));
        }
        if push(repo, remote, &fold)? {
            folded += fold.iter().filter(|(_, new, _)| new.is_none()).count();
            record(repo, remote, &fold);
            for (name, new, _) in &fold {
                if new.is_some() {
                    if let Some(r) = results.get_mut(name) {
                        r.published = Published::Shared;
                    }
                }
            }
            return Ok(report(results, folded, skipped));
        }
        if own.is_empty() {
            // Only the clean-up of folded writer refs failed: nothing of ours is unpublished.
            return Ok(report(results, folded, skipped));
        }
        if push(repo, remote, &own)? {
            record(repo, remote, &own);
            for (name, _, _) in &own {
                if let Some((shared, _)) = shared_of_writer(name) {
                    if let Some(r) = results.get_mut(&shared) {
                        r.published = Published::Writer;
                    }
                }
            }
            return Ok(report(results, folded, skipped));
        }
        std::thread::sleep(Duration::from_millis(
            5 * u64::from(round) + u64::from(std::process::id() % 11),
        ));
    }
    Err(Error::Race {
        message: format!(
            "sync with {remote} did not settle after {MAX_ROUNDS} rounds: the local refs or this clone's \
             writer refs kept moving"
        ),
    })
}

/// Whether some ref of the remote (our writer ref first, then the shared ref, then the others) contains `local`.
fn published_already(
    repo: &gix::Repository,
    local: Option<ObjectId>,
    mine: Option<ObjectId>,
    s: &Seen,
) -> Result<bool> {
    let Some(local) = local else {
        return Ok(true);
    };
    let candidates = mine
        .into_iter()
        .chain(s.main)
        .chain(s.writers.iter().map(|(_, id)| *id));
    for r in candidates {
        if matches!(
            refs::relation(repo, local, r)?,
            refs::Relation::Same | refs::Relation::Behind
        ) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Record in the remote-tracking refs what a successful push did, as the next fetch would.
fn record(repo: &gix::Repository, remote: &str, updates: &[Update]) {
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
    if !push(repo, remote, &update)? {
        return Ok(false);
    }
    record(repo, remote, &update);
    Ok(true)
}

/// The remote-tracking ref of a local jules log or notes ref.
pub fn tracking_name(remote: &str, name: &str) -> String {
    name.replacen("refs/jules/", &format!("refs/remotes/{remote}/jules/"), 1)
        .replacen(
            "refs/notes/jules/",
            &format!("refs/remotes/{remote}/notes/jules/"),
            1,
        )
}

fn join_notes(repo: &gix::Repository, ours: ObjectId, theirs: ObjectId) -> Result<MergeOutcome> {
    Ok(match refs::relation(repo, ours, theirs)? {
        refs::Relation::Same => MergeOutcome::Same(ours),
        refs::Relation::Ahead => MergeOutcome::FastForward(ours),
        refs::Relation::Behind => MergeOutcome::FastForward(theirs),
        refs::Relation::Diverged => MergeOutcome::Merged(crate::notes::union(repo, ours, theirs)?),
    })
}

/// One atomic push of `updates` (name, new value or `None` to delete, leased expected value); `Ok(false)` when
/// a lease was stale (somebody pushed in between) and nothing changed.
///
/// Shells out: gix 0.90 has no push (no send-pack client), and the git binary reaches every transport.
fn push(repo: &gix::Repository, remote: &str, updates: &[Update]) -> Result<bool> {
    let mut args: Vec<String> = vec![
        "push".into(),
        "--porcelain".into(),
        "--atomic".into(),
        "--no-verify".into(),
    ];
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
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args(&args)
        .output()
        .map_err(|e| Error::io("running `git push`", e))?;
    if out.status.success() {
        return Ok(true);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let raced = stdout.lines().any(|l| {
        l.starts_with('!')
            && (l.contains("stale info")
                || l.contains("fetch first")
                || l.contains("non-fast-forward")
                || l.contains("atomic")
                || l.contains("failed to lock")
                || l.contains("cannot lock ref"))
    }) || stderr.contains("stale info");
    if raced {
        return Ok(false);
    }
    let mut text = stdout
        .lines()
        .filter(|l| l.starts_with('!'))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    text.push_str(&stderr);
    Err(remote_error(remote, "push to", text.as_bytes()))
}
