//! `series reroll N`, `--drop`, `--move` and `series undo`: rewrite the series HEAD is on, in memory, then
//! move the branch, the index and the working tree to the result in one step, or change nothing.
//!
//! A fold takes the working tree (staged, unstaged and untracked-but-not-ignored changes, as `git add -A` sees
//! them) as a change against HEAD, squashes it into patch N and replays N+1..n on top ([`super::rewrite`]).
//! Since the rewritten series ends exactly at the working tree's content (anything else is refused), the
//! working tree needs no file written: only the index is replaced. `--drop` and `--move` need a clean tracked
//! tree and update only the files that differ between the old and the new tip.
//!
//! Order of the commit point: objects are written out, then the working tree is switched (refused by git
//! before anything is written if it would overwrite local changes or untracked files), then one ref
//! transaction moves the branch through HEAD (reflog entries on both) and creates the backup
//! `refs/jules/backup/series/<series>/<n>` of the old tip; if that transaction loses a race, the working tree is
//! switched back. Last, the locked copy of the index replaces the index.

use gix::bstr::{BString, ByteSlice};
use gix::ObjectId;
use serde::Serialize;

use super::checkout::Checkout;
use super::commit::{message, rationale_of};
use super::diff;
use super::journal::{self, Hook, Journal};
use super::rewrite::{self, raw_changes, Original, RawChange, Squash, Step, Stop};
use super::{ser_id, Current, Patch};
use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::backup::{self, Backup};

/// How to change patch N's message.
#[derive(Debug, Clone, Default)]
pub struct MessageEdit {
    /// The complete new message.
    pub message: Option<String>,
    /// A new summary line; the rest of the message is kept.
    pub summary: Option<String>,
    /// A new rationale; the summary is kept unless `summary` is given too.
    pub rationale: Option<String>,
}

impl MessageEdit {
    pub fn is_empty(&self) -> bool {
        self.message.is_none() && self.summary.is_none() && self.rationale.is_none()
    }
}

#[derive(Debug, Clone)]
pub enum Action {
    /// Fold the working tree into patch `patch` and/or reword it.
    Fold { patch: usize, message: MessageEdit },
    /// Remove patch `patch`.
    Drop { patch: usize },
    /// Move patch `from` to position `to`.
    Move { from: usize, to: usize },
}

/// How a patch of the new series relates to the old one it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// The very same commit.
    Unchanged,
    /// New commit, same diff and message (new parent).
    Rebased,
    /// Same diff, new message.
    Reworded,
    /// The diff changed.
    Changed,
    /// No old patch corresponds to it (only after `undo`).
    New,
}

#[derive(Debug, Clone, Serialize)]
pub struct PatchChange {
    pub index: usize,
    /// Its position in the old series.
    pub old_index: Option<usize>,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    #[serde(serialize_with = "super::ser_opt_id")]
    pub old_commit: Option<ObjectId>,
    #[serde(serialize_with = "ser_id")]
    pub tree: ObjectId,
    /// Its tree is the old patch's tree.
    pub same_tree: bool,
    pub change: ChangeKind,
    pub summary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DroppedPatch {
    pub old_index: usize,
    #[serde(serialize_with = "ser_id")]
    pub old_commit: ObjectId,
    pub summary: String,
}

/// What a rewrite did.
#[derive(Debug, Clone, Serialize)]
pub struct Rerolled {
    pub series: String,
    pub branch: String,
    /// `fold`, `reword`, `drop`, `move` or `undo`.
    pub operation: &'static str,
    #[serde(serialize_with = "ser_id")]
    pub old_tip: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub new_tip: ObjectId,
    /// Where the old tip is kept.
    pub backup: Backup,
    /// The backup that was restored (`undo` only).
    pub restored: Option<Backup>,
    pub patches: Vec<PatchChange>,
    pub dropped: Vec<DroppedPatch>,
}

fn check_index(i: usize, n: usize, what: &str) -> Result<()> {
    if i == 0 || i > n {
        return Err(Error::usage(format!(
            "{what} {i} does not exist: the series has patches 1 to {n}"
        )));
    }
    Ok(())
}

/// The new message of a patch, `None` when it stays.
fn new_message(o: &Original, edit: &MessageEdit) -> Result<Option<BString>> {
    if edit.is_empty() {
        return Ok(None);
    }
    let old = o.commit_object.message.to_str_lossy().into_owned();
    let had_rationale = rationale_of(&old).is_some();
    let msg = if let Some(full) = &edit.message {
        if edit.summary.is_some() || edit.rationale.is_some() {
            return Err(Error::needs(
                ErrorKind::Usage,
                "a whole new message replaces the summary and the rationale: give it alone",
                Remedy::MessageAlone,
            ));
        }
        let full = full.trim();
        if full.is_empty() {
            return Err(Error::usage("the new message is empty"));
        }
        let full = format!("{full}\n");
        if had_rationale && rationale_of(&full).is_none() {
            return Err(Error::needs(
                ErrorKind::Usage,
                format!(
                    "the new message of patch {} has no `Rationale:` trailer but the old one had",
                    o.index
                ),
                Remedy::KeepRationale,
            ));
        }
        full
    } else {
        let old_summary = old.lines().next().unwrap_or_default().to_owned();
        let summary = edit.summary.clone().unwrap_or(old_summary);
        match &edit.rationale {
            Some(r) => message(&summary, r)?,
            None => {
                let summary = summary.trim();
                if summary.is_empty() || summary.contains('\n') {
                    return Err(Error::usage("the summary must be one non-empty line"));
                }
                let rest = old.split_once('\n').map_or("", |(_, r)| r);
                if rest.is_empty() {
                    format!("{summary}\n")
                } else {
                    format!("{summary}\n{rest}")
                }
            }
        }
    };
    let msg = super::commit::keep_change_id(&old, msg);
    if msg.as_bytes() == o.commit_object.message.as_slice() {
        return Ok(None);
    }
    Ok(Some(msg.into()))
}

/// Rewrite the series HEAD is on as `action` says.
pub fn reroll(
    repo: &gix::Repository,
    action: Action,
    explicit_base: Option<&str>,
    hook: Hook<'_>,
) -> Result<Rerolled> {
    let cur = super::current_or_plain(repo, explicit_base, "series reroll", false)?;
    let n = cur.patches.len();
    if n == 0 {
        return Err(Error::usage(format!(
            "series {} has no patches ({}..{} is empty)",
            cur.series, cur.base.name, cur.branch
        )));
    }
    let originals = Original::read_all(repo, &cur.patches)?;
    let lock = Checkout::lock(repo)?;
    hook(journal::Step::Locked);
    // New objects (the staged working tree's, the rewritten commits' and trees') stay in memory until the whole
    // rewrite succeeded.
    let mut mem = repo.clone().with_object_memory();

    let (first, steps, operation, from_tree, expect_final) = match &action {
        Action::Fold { patch, message } => {
            check_index(*patch, n, "patch")?;
            let msg = new_message(&originals[patch - 1], message)?;
            let unmerged = unmerged_paths(repo, lock.lock_path())?;
            if !unmerged.is_empty() {
                return Err(Error::usage(format!(
                    "the index has unmerged paths ({}); resolve the conflicts first",
                    shown(&unmerged)
                )));
            }
            let worktree = lock.stage_all(&mem)?;
            let (operation, squash) = if worktree == cur.tip_tree {
                // Nothing to fold; but a staged change the working tree undoes (`git rm --cached`) would be
                // lost when the index is replaced.
                let staged = lock.original_tree()?;
                if staged != cur.tip_tree {
                    let paths = changed_paths(repo, cur.tip_tree, staged)?;
                    return Err(Error::usage(format!(
                        "nothing to fold: the working tree matches HEAD, but the index has staged changes the working tree undoes ({}); unstage them (`git restore --staged`) or make the working tree match",
                        shown(&paths)
                    )));
                }
                if msg.is_none() {
                    return Err(if message.is_empty() {
                        Error::needs(
                            ErrorKind::Usage,
                            "nothing to fold: the working tree matches HEAD",
                            Remedy::Reword {
                                patch: patch.to_string(),
                            },
                        )
                    } else {
                        Error::usage(format!("nothing to do: the working tree matches HEAD and patch {patch} already has that message"))
                    });
                }
                ("reword", None)
            } else {
                (
                    "fold",
                    Some(Squash {
                        base: cur.tip_tree,
                        tree: worktree,
                    }),
                )
            };
            let mut steps = vec![Step {
                index: *patch,
                message: msg,
                squash,
            }];
            steps.extend((patch + 1..=n).map(Step::pick));
            (*patch, steps, operation, worktree, Some(worktree))
        }
        Action::Drop { patch } => {
            check_index(*patch, n, "patch")?;
            lock.require_clean("dropping a patch")?;
            let steps = (patch + 1..=n).map(Step::pick).collect();
            (*patch, steps, "drop", cur.tip_tree, None)
        }
        Action::Move { from, to } => {
            check_index(*from, n, "patch")?;
            check_index(*to, n, "position")?;
            if from == to {
                return Err(Error::usage(format!(
                    "patch {from} is already at position {to}"
                )));
            }
            lock.require_clean("moving a patch")?;
            let mut order: Vec<usize> = (1..=n).filter(|i| i != from).collect();
            order.insert(to - 1, *from);
            let first = (*from).min(*to);
            let steps = order[first - 1..].iter().copied().map(Step::pick).collect();
            (first, steps, "move", cur.tip_tree, None)
        }
    };

    let onto = originals[first - 1].parent;
    let onto_tree = originals[first - 1].parent_tree;
    let committer = crate::kit::repo::committer(repo);
    let picked = match rewrite::replay(&mem, onto, onto_tree, &originals, &steps, &committer)? {
        Ok(p) => p,
        Err(stop) => return Err(stop_error(&cur, &originals, &action, stop)),
    };
    let (new_tip, new_tree) = picked
        .last()
        .map_or((onto, onto_tree), |p| (p.commit, p.tree));
    if let Some(expected) = expect_final {
        if new_tree != expected {
            let paths = changed_paths(&mem, expected, new_tree)?;
            return Err(Error::Conflict(format!(
                "after folding into patch {first}, the replayed series would not end with your working tree: later patches change {} differently; nothing was changed, the changes are still in the working tree",
                shown(&paths)
            )));
        }
    }
    rewrite::flush(&mut mem, repo)?;
    drop(mem);

    // The new series: the untouched prefix, then the picked commits.
    let mut new: Vec<NewPatch> = originals[..first - 1]
        .iter()
        .map(|o| NewPatch {
            index: o.index,
            commit: o.commit,
            tree: o.tree,
            from: Some(o.index),
            same_change: true,
        })
        .collect();
    let base_len = new.len();
    new.extend(picked.iter().enumerate().map(|(i, p)| NewPatch {
        index: base_len + i + 1,
        commit: p.commit,
        tree: p.tree,
        from: Some(p.from),
        same_change: p.same_change,
    }));
    let patches = summarize(repo, &cur.patches, &new)?;
    let dropped = match action {
        Action::Drop { patch } => vec![DroppedPatch {
            old_index: patch,
            old_commit: originals[patch - 1].commit,
            summary: originals[patch - 1].summary.clone(),
        }],
        _ => Vec::new(),
    };

    let what = match &action {
        Action::Fold { patch, .. } if operation == "fold" => format!("fold into patch {patch}/{n}"),
        Action::Fold { patch, .. } => format!("reword patch {patch}/{n}"),
        Action::Drop { patch } => format!("drop patch {patch}/{n}"),
        Action::Move { from, to } => format!("move patch {from} to {to}"),
    };
    let log = format!("jules series reroll: {what}");
    let backup = commit_move(repo, lock, &cur, new_tip, from_tree, new_tree, &log, hook)?;
    Ok(Rerolled {
        series: cur.series,
        branch: cur.branch,
        operation,
        old_tip: cur.tip,
        new_tip,
        backup,
        restored: None,
        patches,
        dropped,
    })
}

/// Journal the operation, switch the working tree, move the branch through HEAD with a backup of the old tip,
/// replace the index, drop the journal (the steps of [`super::journal`]). When the branch moved meanwhile, the
/// switch is undone and nothing changed.
#[allow(clippy::too_many_arguments)]
fn commit_move(
    repo: &gix::Repository,
    lock: Checkout,
    cur: &Current,
    new_tip: ObjectId,
    from_tree: ObjectId,
    new_tree: ObjectId,
    log: &str,
    hook: Hook<'_>,
) -> Result<Backup> {
    if let Some(e) = super::checkout::ref_lock(repo, &cur.branch) {
        return Err(e);
    }
    let j = Journal {
        operation: log.to_owned(),
        series: cur.series.clone(),
        branch: cur.branch.clone(),
        plain: cur.plain,
        pid: std::process::id(),
        old_tip: cur.tip,
        from_tree,
        new_tip,
        new_tree,
    };
    j.write(repo)?;
    hook(journal::Step::Journaled);
    if let Err(e) = lock.switch(from_tree, new_tree) {
        // read-tree refuses before it writes anything.
        Journal::remove(repo)?;
        return Err(e);
    }
    hook(journal::Step::Switched);
    let edits = vec![backup::update("HEAD", Some(cur.tip), new_tip, true, log)?];
    let branch = cur.branch.clone();
    let backup = match backup::transaction(repo, cur.owner(), cur.tip, edits, log, || {
        Error::Conflict(format!(
            "{branch} moved while it was being rewritten; nothing was changed, run the command again"
        ))
    }) {
        Ok(b) => b,
        Err(e) => {
            let _ = lock.switch(new_tree, from_tree);
            Journal::remove(repo)?;
            return Err(e);
        }
    };
    hook(journal::Step::Moved);
    lock.commit()?;
    hook(journal::Step::Indexed);
    Journal::remove(repo)?;
    Ok(backup)
}

/// Restore backup `number` (default: the latest) of the series HEAD is on. The current tip becomes a new
/// backup, so `undo` twice returns to where it started.
pub fn undo(repo: &gix::Repository, number: Option<u64>, hook: Hook<'_>) -> Result<Rerolled> {
    let cur = super::current_or_plain(repo, None, "series undo", true)?;
    let backups = backup::list(repo, cur.owner())?;
    let target = match number {
        Some(k) => backups
            .iter()
            .find(|b| b.number == k)
            .cloned()
            .ok_or_else(|| {
                Error::not_found(
                    crate::kit::error::Thing::Backup,
                    format!("{}{k}", cur.owner().prefix()),
                )
            })?,
        None => backups.last().cloned().ok_or_else(|| {
            Error::usage(format!(
                "series {} has no backup to restore ({}*)",
                cur.series,
                cur.owner().prefix()
            ))
        })?,
    };
    if target.commit == cur.tip {
        return Err(Error::usage(format!(
            "{} already points at backup {} ({})",
            cur.branch,
            target.number,
            target.commit.to_hex_with_len(7)
        )));
    }
    let target_tree = repo.find_commit(target.commit)?.tree_id()?.detach();
    let lock = Checkout::lock(repo)?;
    hook(journal::Step::Locked);
    lock.require_clean("series undo")?;
    let restored = super::patches(repo, cur.base.commit, target.commit)?;
    let new: Vec<NewPatch> = restored
        .iter()
        .map(|p| NewPatch {
            index: p.index,
            commit: p.commit,
            tree: p.tree,
            from: None,
            same_change: false,
        })
        .collect();
    let patches = summarize(repo, &cur.patches, &new)?;
    let matched: Vec<usize> = patches.iter().filter_map(|p| p.old_index).collect();
    let dropped = cur
        .patches
        .iter()
        .filter(|p| !matched.contains(&p.index))
        .map(|p| DroppedPatch {
            old_index: p.index,
            old_commit: p.commit,
            summary: p.summary.clone(),
        })
        .collect();
    let log = format!(
        "jules series undo: restore backup {} ({})",
        target.number,
        target.commit.to_hex_with_len(7)
    );
    let backup = commit_move(
        repo,
        lock,
        &cur,
        target.commit,
        cur.tip_tree,
        target_tree,
        &log,
        hook,
    )?;
    Ok(Rerolled {
        series: cur.series,
        branch: cur.branch,
        operation: "undo",
        old_tip: cur.tip,
        new_tip: target.commit,
        backup,
        restored: Some(target),
        patches,
        dropped,
    })
}

/// Paths with conflict stages in the index (a `git stash pop` or `git apply -3` that stopped, say): `git add -A`
/// would stage their conflict markers. Read from the locked copy `index_path`, whose checksum is not verified
/// again: it was copied from the index just now.
fn unmerged_paths(repo: &gix::Repository, index_path: &std::path::Path) -> Result<Vec<String>> {
    let index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        true,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| Error::wrap(format!("reading {}", index_path.display()), e))?;
    let mut paths: Vec<String> = index
        .entries()
        .iter()
        .filter(|e| e.stage() != gix::index::entry::Stage::Unconflicted)
        .map(|e| e.path(&index).to_string())
        .collect();
    paths.dedup();
    Ok(paths)
}

fn shown(paths: &[String]) -> String {
    let head: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    if paths.len() > head.len() {
        format!("{} and {} more", head.join(", "), paths.len() - head.len())
    } else {
        head.join(", ")
    }
}

fn stop_error(cur: &Current, originals: &[Original], action: &Action, stop: Stop) -> Error {
    let what = match action {
        Action::Fold { patch, .. } => format!("folding the working tree into patch {patch}"),
        Action::Drop { patch } => format!("dropping patch {patch}"),
        Action::Move { from, to } => format!("moving patch {from} to position {to}"),
    };
    let kept = match action {
        Action::Fold { .. } => "nothing was changed, the changes are still in the working tree",
        _ => "nothing was changed",
    };
    let describe = |i: usize| rewrite::describe(originals, i);
    let _ = cur;
    match stop {
        Stop::Conflict {
            from, squash: true, paths, ..
        } => Error::Conflict(format!(
            "the working-tree changes do not apply to {}: conflict in {}; {kept} (do they change lines that a later patch introduces? fold them into that patch instead)",
            describe(from),
            shown(&paths)
        )),
        Stop::Conflict { from, paths, .. } => Error::Conflict(format!(
            "{} no longer applies after {what}: conflict in {}; {kept}",
            describe(from),
            shown(&paths)
        )),
        Stop::Empty { from, .. } => Error::needs(
            ErrorKind::Conflict,
            format!(
                "{} would become empty after {what}: its changes are already there; {kept}",
                describe(from)
            ),
            Remedy::Drop {
                patch: from.to_string(),
            },
        ),
    }
}

/// Paths that differ between two trees.
fn changed_paths(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Vec<String>> {
    Ok(raw_changes(repo, a, b)?
        .into_iter()
        .map(|c| c.0.to_string())
        .collect())
}

/// Whether the change from `a0` to `a1` is the change from `b0` to `b1`: the same files, blobs and modes,
/// or else the same [fingerprint](diff::PatchDiff::fingerprint).
fn same_change(
    repo: &gix::Repository,
    (a0, a1): (ObjectId, ObjectId),
    (b0, b1): (ObjectId, ObjectId),
) -> Result<bool> {
    if (a0, a1) == (b0, b1) {
        return Ok(true);
    }
    let (ra, rb) = (raw_changes(repo, a0, a1)?, raw_changes(repo, b0, b1)?);
    if ra == rb {
        return Ok(true);
    }
    let paths = |r: &[RawChange]| r.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
    // Different files changed, and no addition or deletion that rename detection could pair up: different.
    let no_rename = |r: &[RawChange]| r.iter().all(|c| c.1 != 0 && c.3 != 0);
    if paths(&ra) != paths(&rb) && no_rename(&ra) && no_rename(&rb) {
        return Ok(false);
    }
    let opts = diff::Options::default();
    Ok(
        diff::diff_trees(repo, Some(a0), Some(a1), opts)?.fingerprint()
            == diff::diff_trees(repo, Some(b0), Some(b1), opts)?.fingerprint(),
    )
}

/// A patch of the rewritten series, as [`summarize`] sees it.
struct NewPatch {
    index: usize,
    commit: ObjectId,
    tree: ObjectId,
    /// The old patch it was picked from, when known.
    from: Option<usize>,
    /// It is known to make the same change as that old patch.
    same_change: bool,
}

/// Compare the new series with the old one, like `git range-diff`:
/// a new patch is matched with the old patch it was picked from, else with the old patch of the same
/// commit, then of the same change, then of the same summary.
fn summarize(repo: &gix::Repository, old: &[Patch], new: &[NewPatch]) -> Result<Vec<PatchChange>> {
    let parent_tree = |commit: ObjectId| -> Result<ObjectId> {
        let c = repo.find_commit(commit)?;
        let parent = c
            .parent_ids()
            .next()
            .map(|p| p.detach())
            .ok_or_else(|| Error::Other(format!("{commit} has no parent")))?;
        Ok(repo.find_commit(parent)?.tree_id()?.detach())
    };
    let message_of = |commit: ObjectId| -> Result<BString> {
        Ok(repo.find_commit(commit)?.message_raw_sloppy().to_owned())
    };
    let mut used: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(new.len());
    for np in new {
        let (index, commit, tree, known) = (np.index, np.commit, np.tree, np.from);
        let summary = repo.find_commit(commit)?.message()?.summary().to_string();
        let mut old_index = known;
        if old_index.is_none() {
            old_index = old
                .iter()
                .find(|o| o.commit == commit && !used.contains(&o.index))
                .map(|o| o.index);
        }
        if old_index.is_none() {
            let new_parent_tree = parent_tree(commit)?;
            for o in old.iter().filter(|o| !used.contains(&o.index)) {
                if same_change(
                    repo,
                    (parent_tree(o.commit)?, o.tree),
                    (new_parent_tree, tree),
                )? {
                    old_index = Some(o.index);
                    break;
                }
            }
        }
        if old_index.is_none() {
            old_index = old
                .iter()
                .find(|o| o.summary == summary && !used.contains(&o.index))
                .map(|o| o.index);
        }
        let Some(oi) = old_index else {
            out.push(PatchChange {
                index,
                old_index: None,
                commit,
                old_commit: None,
                tree,
                same_tree: false,
                change: ChangeKind::New,
                summary,
            });
            continue;
        };
        used.push(oi);
        let o = &old[oi - 1];
        let change = if o.commit == commit {
            ChangeKind::Unchanged
        } else {
            let same_diff = np.same_change
                || same_change(
                    repo,
                    (parent_tree(o.commit)?, o.tree),
                    (parent_tree(commit)?, tree),
                )?;
            let same_msg = message_of(o.commit)? == message_of(commit)?;
            match (same_diff, same_msg) {
                (true, true) => ChangeKind::Rebased,
                (true, false) => ChangeKind::Reworded,
                (false, _) => ChangeKind::Changed,
            }
        };
        out.push(PatchChange {
            index,
            old_index: Some(oi),
            commit,
            old_commit: Some(o.commit),
            tree,
            same_tree: o.tree == tree,
            change,
            summary,
        });
    }
    Ok(out)
}
