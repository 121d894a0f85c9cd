//! `series finalize` and `series abort`: land a series on its base, or give it up, and return to the base.
//!
//! Finalize computes the base's new tip first (a fast-forward; the series replayed onto a base that moved,
//! in memory; or a merge commit), verifies it with the verify cache, then in one ref transaction moves the
//! base, deletes the staging branch, keeps the old series tip as a backup and points HEAD at the base; the
//! working tree moves only by the files that differ; the series' `julesBase` config goes last. A series that
//! no longer applies on its base, a failing patch or a concurrent ref move changes nothing.
//!
//! Abort deletes the staging branch (its tip kept as a backup) and its config, and returns HEAD and the
//! working tree to the base; it refuses a working tree with uncommitted changes.

use std::sync::atomic::AtomicBool;

use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};
use gix::ObjectId;
use serde::Serialize;

use super::checkout::Checkout;
use super::rewrite::{self, Original, Step, Stop};
use super::{branch_ref, ser_id, Base, Current};
use crate::capabilities::verify::{self, CommitResult, Report};
use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::backup::{self, Backup, Owner};
use crate::store::refs::{relation, Relation};

/// How the series lands on its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Fast-forward when the base did not move, else replay the patches onto it (linear history).
    #[default]
    Rebase,
    /// A merge commit with the base and the series as parents, also when a fast-forward is possible.
    Merge,
    /// Only a fast-forward; refused when the base moved.
    FfOnly,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub mode: Mode,
    /// `None`: `--no-verify`.
    pub verify: Option<verify::Options>,
    pub base: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finalized {
    pub series: String,
    pub branch: String,
    pub base: Base,
    pub mode: Mode,
    /// The base only moved forward to the series' tip.
    pub fast_forward: bool,
    #[serde(serialize_with = "ser_id")]
    pub old_base: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub new_base: ObjectId,
    /// The commits that landed on the base, oldest first (the merge commit last with `--merge`).
    #[serde(serialize_with = "ser_ids")]
    pub commits: Vec<ObjectId>,
    /// Where the series' tip is kept.
    pub backup: Backup,
    pub verified: bool,
}

fn ser_ids<S: serde::Serializer>(ids: &[ObjectId], s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(ids.len()))?;
    for id in ids {
        seq.serialize_element(&id.to_string())?;
    }
    seq.end()
}

pub enum Outcome {
    Done(Finalized),
    /// A patch failed verification (or the run was interrupted); nothing was changed.
    VerifyFailed(Report),
}

fn full(name: &str) -> Result<FullName> {
    name.try_into()
        .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))
}

/// The local branch `base` names, `refs/heads/…`, if it is one.
fn local_branch(repo: &gix::Repository, base: &Base) -> Result<Option<String>> {
    let name = base.name.strip_prefix("refs/heads/").unwrap_or(&base.name);
    let full = format!("refs/heads/{name}");
    Ok(crate::store::refs::target(repo, &full)?.map(|_| full))
}

/// Land the series HEAD is on. `on_result` sees verify results as they come.
pub fn finalize(
    repo: &gix::Repository,
    opts: &Options,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Outcome> {
    let cur = super::current(repo, opts.base.as_deref(), "series finalize")?;
    let n = cur.patches.len();
    if n == 0 {
        return Err(Error::usage(format!(
            "series {} has no patches ({}..{} is empty): nothing to finalize; `git jules series abort` removes it",
            cur.series, cur.base.name, cur.branch
        )));
    }
    let Some(base_ref) = local_branch(repo, &cur.base)? else {
        return Err(Error::needs(
            ErrorKind::Usage,
            format!(
                "the base {} is not a local branch: finalize lands a series on a local branch",
                cur.base.name
            ),
            Remedy::Base,
        ));
    };
    checked_out_elsewhere(repo, &base_ref)?;
    // Fail fast on a dirty tree, before verifying for minutes.
    Checkout::lock(repo)?.require_clean("series finalize")?;

    let fast_forward = relation(repo, cur.tip, cur.base.commit)? == Relation::Ahead;
    let committer = crate::kit::repo::committer(repo);
    let (target, commits) = match (opts.mode, fast_forward) {
        (Mode::FfOnly | Mode::Rebase, true) => {
            (cur.tip, cur.patches.iter().map(|p| p.commit).collect::<Vec<_>>())
        }
        (Mode::FfOnly, false) => {
            return Err(Error::needs(
                ErrorKind::Conflict,
                format!(
                    "{} moved since the series started ({} is not on {}): it cannot be fast-forwarded; nothing was changed",
                    cur.base.name,
                    cur.base.commit.to_hex_with_len(7),
                    cur.branch
                ),
                Remedy::RebaseOrMerge,
            ))
        }
        (Mode::Rebase, false) => rebase_onto_base(repo, &cur, &committer)?,
        (Mode::Merge, _) => merge_into_base(repo, &cur, &committer)?,
    };

    let mut verified = false;
    if let Some(vopts) = &opts.verify {
        let report = verify::verify(repo, cur.base.clone(), target, vopts, interrupt, on_result)?;
        if !report.passed {
            return Ok(Outcome::VerifyFailed(report));
        }
        verified = true;
    }

    let target_tree = repo.find_commit(target)?.tree_id()?.detach();
    let lock = Checkout::lock(repo)?;
    lock.require_clean("series finalize")?;
    lock.switch(cur.tip_tree, target_tree)?;
    let log = format!(
        "jules series finalize: {} onto {} ({})",
        cur.branch,
        cur.base.name,
        match (opts.mode, target == cur.tip) {
            (_, true) => "fast-forward",
            (Mode::Merge, false) => "merge",
            _ => "rebase",
        }
    );
    let edits = vec![
        head_to_branch(&cur, &base_ref, target, &log)?,
        backup::update(&base_ref, Some(cur.base.commit), target, false, &log)?,
        RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(Target::Object(cur.tip)),
                log: RefLog::AndReference,
            },
            name: full(&branch_ref(&cur.series))?,
            deref: false,
        },
    ];
    let moved = || {
        Error::Conflict(format!(
            "{} or {} moved meanwhile; nothing was changed, run the command again",
            cur.branch, cur.base.name
        ))
    };
    let backup = match backup::transaction(
        repo,
        Owner::Series(&cur.series),
        cur.tip,
        edits,
        &log,
        moved,
    ) {
        Ok(b) => b,
        Err(e) => {
            let _ = lock.switch(target_tree, cur.tip_tree);
            return Err(e);
        }
    };
    lock.commit()?;
    head_reflog(repo, cur.tip, target, &cur.branch, &cur.base.name);
    remove_series_config(repo, &cur.branch)?;
    Ok(Outcome::Done(Finalized {
        series: cur.series,
        branch: cur.branch,
        base: cur.base.clone(),
        mode: opts.mode,
        fast_forward: target == cur.tip,
        old_base: cur.base.commit,
        new_base: target,
        commits,
        backup,
        verified,
    }))
}

/// Add HEAD's reflog entry for the switch from the series branch, worded as `git checkout` words it so that
/// `git checkout -` finds its way back. gix writes no reflog entry when HEAD changes its symbolic target, so
/// the line is appended here, best effort: the history move itself is logged on the branches.
fn head_reflog(repo: &gix::Repository, old: ObjectId, new: ObjectId, from: &str, to: &str) {
    use std::io::Write as _;
    let sig = crate::kit::repo::committer(repo);
    let line = format!(
        "{old} {new} {} <{}> {}\tcheckout: moving from {from} to {to}\n",
        sig.name, sig.email, sig.time
    );
    let path = repo.git_dir().join("logs").join("HEAD");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Refuse to move a branch that another worktree has checked out: its index and files would no longer
/// match its HEAD.
fn checked_out_elsewhere(repo: &gix::Repository, branch: &str) -> Result<()> {
    // Our own HEAD is on the series branch, so any worktree with `branch` checked out is another one.
    for other in repo.worktrees_including_main()? {
        let Ok(other) = other else { continue };
        if other
            .head_name()
            .ok()
            .flatten()
            .is_some_and(|h| h.as_bstr() == branch)
        {
            let place = other.workdir().map_or_else(
                || other.git_dir().display().to_string(),
                |p| p.display().to_string(),
            );
            return Err(Error::usage(format!(
                "{branch} is checked out in the worktree {place}; moving it would leave that worktree out of step"
            )));
        }
    }
    Ok(())
}

/// HEAD from the staging branch to `branch`, whose new value is `target`.
fn head_to_branch(cur: &Current, branch: &str, _target: ObjectId, log: &str) -> Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: log.into(),
            },
            expected: PreviousValue::MustExistAndMatch(Target::Symbolic(full(&branch_ref(
                &cur.series,
            ))?)),
            new: Target::Symbolic(full(branch)?),
        },
        name: full("HEAD")?,
        deref: false,
    })
}

/// The series replayed onto the base's current tip, objects written: (new tip, new commits).
fn rebase_onto_base(
    repo: &gix::Repository,
    cur: &Current,
    committer: &gix::actor::Signature,
) -> Result<(ObjectId, Vec<ObjectId>)> {
    let originals = Original::read_all(repo, &cur.patches)?;
    let base_tree = repo.find_commit(cur.base.commit)?.tree_id()?.detach();
    let steps: Vec<Step> = (1..=originals.len()).map(Step::pick).collect();
    let mut mem = repo.clone().with_object_memory();
    let picked = match rewrite::replay(
        &mem,
        cur.base.commit,
        base_tree,
        &originals,
        &steps,
        committer,
    )? {
        Ok(p) => p,
        Err(stop) => {
            let describe = |i: usize| rewrite::describe(&originals, i);
            let moved = format!(
                "{} moved to {}",
                cur.base.name,
                cur.base.commit.to_hex_with_len(7)
            );
            return Err(match stop {
                Stop::Conflict { from, paths, .. } => Error::needs(
                    ErrorKind::Conflict,
                    format!(
                        "the series no longer applies on its base ({moved}): {} conflicts in {}; nothing was changed",
                        describe(from),
                        paths.join(", ")
                    ),
                    Remedy::Merge,
                ),
                Stop::Empty { from, .. } => Error::needs(
                    ErrorKind::Conflict,
                    format!(
                        "{} would become empty on its base ({moved}): its changes are already there; nothing was changed",
                        describe(from)
                    ),
                    Remedy::Drop {
                        patch: from.to_string(),
                    },
                ),
            });
        }
    };
    rewrite::flush(&mut mem, repo)?;
    let tip = picked.last().map(|p| p.commit).unwrap_or(cur.base.commit);
    Ok((tip, picked.into_iter().map(|p| p.commit).collect()))
}

/// A merge commit of the base and the series, objects written: (merge commit, series commits + it).
fn merge_into_base(
    repo: &gix::Repository,
    cur: &Current,
    committer: &gix::actor::Signature,
) -> Result<(ObjectId, Vec<ObjectId>)> {
    // Not `repo.merge_base`: gix 0.90 may name a redundant base first (see `refs::merge_base`).
    let merge_base =
        crate::store::refs::merge_base(repo, cur.base.commit, cur.tip)?.ok_or_else(|| {
            Error::usage(format!(
                "{} and {} have no common history: nothing to merge",
                cur.base.name, cur.branch
            ))
        })?;
    let tree_of =
        |c: ObjectId| -> Result<ObjectId> { Ok(repo.find_commit(c)?.tree_id()?.detach()) };
    let mut mem = repo.clone().with_object_memory();
    let tree = match rewrite::Merger::new(&mem)?.merge(
        tree_of(merge_base)?,
        tree_of(cur.base.commit)?,
        cur.tip_tree,
    )? {
        Ok(tree) => tree,
        Err(paths) => {
            return Err(Error::Conflict(format!(
                "the series no longer merges into its base ({} moved to {}): conflict in {}; nothing was changed",
                cur.base.name,
                cur.base.commit.to_hex_with_len(7),
                paths.join(", ")
            )))
        }
    };
    let mut message = format!("Merge series '{}' into {}\n\n", cur.series, cur.base.name);
    for p in &cur.patches {
        message.push_str(&format!("* {}\n", p.summary));
    }
    let commit = gix::objs::Commit {
        tree,
        parents: [cur.base.commit, cur.tip].into_iter().collect(),
        author: committer.clone(),
        committer: committer.clone(),
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    let id = mem.write_object(&commit)?.detach();
    rewrite::flush(&mut mem, repo)?;
    let mut commits: Vec<ObjectId> = cur.patches.iter().map(|p| p.commit).collect();
    commits.push(id);
    Ok((id, commits))
}

/// Remove the series branch's `branch.<branch>.julesBase` (and its section when nothing else is in it).
pub fn remove_series_config(repo: &gix::Repository, branch: &str) -> Result<()> {
    crate::capabilities::base::set_configured(&mut repo.clone(), branch, None)
}

#[derive(Debug, Clone, Serialize)]
pub struct Aborted {
    pub series: String,
    pub branch: String,
    /// Where HEAD went: the base branch, or `null` when HEAD was elsewhere.
    pub checked_out: Option<String>,
    pub backup: Backup,
}

/// Remove series `name` (default: the one HEAD is on): its tip becomes a backup, the branch and its config
/// go; when HEAD was on it, HEAD and the working tree return to the base (a local branch; else the base's
/// commit, detached).
pub fn abort(repo: &gix::Repository, name: Option<&str>) -> Result<Aborted> {
    let head_series = super::current_branch(repo)?
        .as_deref()
        .and_then(super::series_of_branch)
        .map(str::to_owned);
    let on_it = match name {
        None => true,
        Some(n) => head_series.as_deref() == Some(n),
    };
    if on_it {
        let cur = super::current(repo, None, "series abort")?;
        let target_branch = local_branch(repo, &cur.base)?;
        let base_tree = repo.find_commit(cur.base.commit)?.tree_id()?.detach();
        let lock = Checkout::lock(repo)?;
        lock.require_clean("series abort")?;
        lock.switch(cur.tip_tree, base_tree)?;
        let log = format!(
            "jules series abort: {} (back to {})",
            cur.branch, cur.base.name
        );
        let head = match &target_branch {
            Some(b) => head_to_branch(&cur, b, cur.base.commit, &log)?,
            None => RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: log.clone().into(),
                    },
                    expected: PreviousValue::MustExistAndMatch(Target::Symbolic(full(
                        &branch_ref(&cur.series),
                    )?)),
                    new: Target::Object(cur.base.commit),
                },
                name: full("HEAD")?,
                deref: false,
            },
        };
        let edits = vec![head, delete_branch(&cur.series, cur.tip)?];
        let branch = cur.branch.clone();
        let moved = || Error::Conflict(format!("{branch} moved meanwhile; nothing was changed"));
        let backup = match backup::transaction(
            repo,
            Owner::Series(&cur.series),
            cur.tip,
            edits,
            &log,
            moved,
        ) {
            Ok(b) => b,
            Err(e) => {
                let _ = lock.switch(base_tree, cur.tip_tree);
                return Err(e);
            }
        };
        lock.commit()?;
        let to = target_branch.as_deref().map_or_else(
            || cur.base.commit.to_string(),
            |b| b.trim_start_matches("refs/heads/").to_owned(),
        );
        head_reflog(repo, cur.tip, cur.base.commit, &cur.branch, &to);
        remove_series_config(repo, &cur.branch)?;
        return Ok(Aborted {
            series: cur.series,
            branch: cur.branch,
            checked_out: Some(
                target_branch
                    .map(|b| b.trim_start_matches("refs/heads/").to_owned())
                    .unwrap_or_else(|| cur.base.commit.to_string()),
            ),
            backup,
        });
    }
    let name = name.expect("not on it means named");
    let branch = super::branch_name(name);
    let tip = crate::store::refs::target(repo, &branch_ref(name))?
        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Series, name))?;
    let log = format!("jules series abort: {branch}");
    let moved = || Error::Conflict(format!("{branch} moved meanwhile; nothing was changed"));
    let backup = backup::transaction(
        repo,
        Owner::Series(name),
        tip,
        vec![delete_branch(name, tip)?],
        &log,
        moved,
    )?;
    remove_series_config(repo, &branch)?;
    Ok(Aborted {
        series: name.to_owned(),
        branch,
        checked_out: None,
        backup,
    })
}

fn delete_branch(series: &str, tip: ObjectId) -> Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Delete {
            expected: PreviousValue::MustExistAndMatch(Target::Object(tip)),
            log: RefLog::AndReference,
        },
        name: full(&branch_ref(series))?,
        deref: false,
    })
}
