//! `git jules sync`: fetch the remote's logs and notes, join divergent copies, push with a lease, retry.
//!
//! The remote is the only server. A round fetches `refs/jules/*` and `refs/notes/jules/*` into remote-tracking
//! refs (with gix), then for every log or notes ref decides: create locally, fast-forward locally, push ours,
//! or join both (a merge commit) and push the join. The push (the `git` binary: gix 0.90 cannot push) is
//! atomic and leased on the values just fetched; when somebody pushed in between, the round starts over.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use gix::remote::Direction;
use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::eventlog::{Log, MergeOutcome};
use crate::refs;

const MAX_ROUNDS: u32 = 20;

/// What happened to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    UpToDate,
    /// The remote had it and we did not.
    Created,
    /// The remote was ahead; we moved forward.
    FastForwarded,
    /// We were ahead; we pushed.
    Pushed,
    /// Both had news: joined and pushed.
    Merged,
}

impl Action {
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::UpToDate => "up-to-date",
            Action::Created => "created",
            Action::FastForwarded => "fast-forwarded",
            Action::Pushed => "pushed",
            Action::Merged => "merged",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RefSync {
    pub name: String,
    pub action: Action,
    pub tip: String,
}

#[derive(Debug, Serialize)]
pub struct SyncReport {
    pub remote: String,
    pub rounds: u32,
    pub refs: Vec<RefSync>,
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

/// Fetch the remote's jules refs into remote-tracking refs with gix.
pub fn fetch(repo: &gix::Repository, remote: &str) -> Result<()> {
    let configured = repo
        .find_remote(remote)
        .map_err(|_| Error::not_found("remote", remote))?;
    let url = configured
        .url(Direction::Fetch)
        .ok_or_else(|| Error::usage(format!("remote {remote} has no URL")))?
        .to_owned();
    let specs = [
        format!("+refs/jules/*:refs/remotes/{remote}/jules/*"),
        format!("+refs/notes/jules/*:refs/remotes/{remote}/notes/jules/*"),
    ];
    let anon = repo
        .remote_at(url)?
        .with_refspecs(specs.iter().map(String::as_str), Direction::Fetch)?;
    anon.connect(Direction::Fetch)?
        .prepare_fetch(gix::progress::Discard, Default::default())?
        .with_reflog_message(gix::remote::fetch::RefLogMessage::Override {
            message: "jules: sync fetch".into(),
        })
        .receive(gix::progress::Discard, &AtomicBool::new(false))?;
    Ok(())
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

/// Synchronise every jules log and notes ref with `remote` until both sides agree.
pub fn sync(repo: &gix::Repository, remote: &str) -> Result<SyncReport> {
    let mut results: Vec<RefSync> = Vec::new();
    for round in 1..=MAX_ROUNDS {
        fetch(repo, remote)?;
        let mut pushes: Vec<(String, ObjectId, Option<ObjectId>)> = Vec::new();
        let mut round_results = Vec::new();
        let mut local_race = false;
        for (tracking_prefix, local_prefix) in tracking_prefixes(remote) {
            let theirs = list(repo, &tracking_prefix)?;
            let ours = list(repo, local_prefix)?;
            let mut names: BTreeSet<String> = BTreeSet::new();
            names.extend(
                theirs
                    .iter()
                    .map(|(n, _)| n[tracking_prefix.len()..].to_owned()),
            );
            names.extend(
                ours.iter()
                    .map(|(n, _)| n[local_prefix.len()..].to_owned())
                    .filter(|n| !n.starts_with("backup/")),
            );
            for short in names {
                let local_name = format!("{local_prefix}{short}");
                let local = ours
                    .iter()
                    .find(|(n, _)| *n == local_name)
                    .map(|(_, id)| *id);
                let remote_tip = theirs
                    .iter()
                    .find(|(n, _)| n[tracking_prefix.len()..] == short)
                    .map(|(_, id)| *id);
                let (action, tip) = match (local, remote_tip) {
                    (None, None) => continue,
                    (None, Some(r)) => {
                        if !refs::cas(repo, &local_name, None, r, "jules: sync create")? {
                            local_race = true;
                        }
                        (Action::Created, r)
                    }
                    (Some(l), None) => {
                        pushes.push((local_name.clone(), l, None));
                        (Action::Pushed, l)
                    }
                    (Some(l), Some(r)) => {
                        let outcome = if local_prefix == "refs/notes/jules/" {
                            join_notes(repo, l, r)?
                        } else {
                            Log::open(repo, &local_name)?.join(l, r)?
                        };
                        match outcome {
                            MergeOutcome::Same(t) => (Action::UpToDate, t),
                            MergeOutcome::FastForward(t) if t == l => {
                                pushes.push((local_name.clone(), l, Some(r)));
                                (Action::Pushed, l)
                            }
                            MergeOutcome::FastForward(t) => {
                                if !refs::cas(
                                    repo,
                                    &local_name,
                                    Some(l),
                                    t,
                                    "jules: sync fast-forward",
                                )? {
                                    local_race = true;
                                }
                                (Action::FastForwarded, t)
                            }
                            MergeOutcome::Merged(m) => {
                                if !refs::cas(repo, &local_name, Some(l), m, "jules: sync merge")? {
                                    local_race = true;
                                }
                                pushes.push((local_name.clone(), m, Some(r)));
                                (Action::Merged, m)
                            }
                        }
                    }
                };
                round_results.push(RefSync {
                    name: local_name,
                    action,
                    tip: tip.to_string(),
                });
            }
        }
        // Keep the strongest action seen per ref across rounds: a ref merged in round 1 and up to date in
        // round 2 was merged.
        for r in round_results {
            match results.iter_mut().find(|x| x.name == r.name) {
                Some(x) => {
                    x.tip = r.tip;
                    if x.action == Action::UpToDate {
                        x.action = r.action;
                    }
                }
                None => results.push(r),
            }
        }
        if local_race {
            continue;
        }
        if pushes.is_empty() {
            return Ok(SyncReport {
                remote: remote.to_owned(),
                rounds: round,
                refs: results,
            });
        }
        if push(repo, remote, &pushes)? {
            // Record what the remote now has, as a fetch would, so readers see one tip.
            for (name, new, _) in &pushes {
                let tracking = tracking_name(remote, name);
                let old = refs::target(repo, &tracking)?;
                let _ = refs::cas(repo, &tracking, old, *new, "jules: sync push");
            }
            return Ok(SyncReport {
                remote: remote.to_owned(),
                rounds: round,
                refs: results,
            });
        }
        std::thread::sleep(Duration::from_millis(20 * u64::from(round)));
    }
    Err(Error::Race {
        message: format!(
            "sync with {remote} did not settle after {MAX_ROUNDS} rounds: others keep pushing"
        ),
    })
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
    if !push(repo, remote, &[(name.to_owned(), new, expected)])? {
        return Ok(false);
    }
    let tracking = tracking_name(remote, name);
    let old = refs::target(repo, &tracking)?;
    let _ = refs::cas(repo, &tracking, old, new, "jules: push");
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

/// Push with leases; `Ok(false)` when a lease was stale (somebody pushed in between).
///
/// Shells out: gix 0.90 has no push (no send-pack client).
fn push(
    repo: &gix::Repository,
    remote: &str,
    pushes: &[(String, ObjectId, Option<ObjectId>)],
) -> Result<bool> {
    let mut args: Vec<String> = vec![
        "push".into(),
        "--porcelain".into(),
        "--atomic".into(),
        "--no-verify".into(),
    ];
    for (name, _, expected) in pushes {
        args.push(format!(
            "--force-with-lease={name}:{}",
            expected.map(|e| e.to_string()).unwrap_or_default()
        ));
    }
    args.push(remote.into());
    for (name, new, _) in pushes {
        args.push(format!("{new}:{name}"));
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
                || l.contains("atomic"))
    }) || stderr.contains("stale info");
    if raced {
        Ok(false)
    } else {
        Err(Error::GitCommand {
            args: args.join(" "),
            stderr: format!("{}\n{}", stdout.trim(), stderr.trim())
                .trim()
                .to_owned(),
        })
    }
}
