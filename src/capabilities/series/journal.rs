//! Crash safety of the rewrites that move the user's checkout (reroll, drop, move, undo): a journal of the
//! operation in progress, the named steps a test can stop at, and the recovery that finishes an interrupted
//! operation.
//!
//! The steps, in order (see "Crash-safe rewrites" in `docs/architecture.md` for why this order):
//!
//! 1. [`Step::Locked`]: `index.lock` taken, holding a copy of the index (nothing else changed);
//! 2. [`Step::Journaled`]: the journal `<git dir>/JULES_SERIES_OP` written (atomically) with the old tip, the
//!    tree the working tree is moved from, and the new tip and tree; the new commits are already written;
//! 3. [`Step::Switched`]: the working tree and the locked index copy moved to the new tree
//!    (`git read-tree -m -u`, which refuses, before writing, to overwrite anything local);
//! 4. [`Step::Moved`]: the branch moved and the old tip backed up, in one ref transaction;
//! 5. [`Step::Indexed`]: the index copy renamed over the index;
//! 6. the journal removed.
//!
//! Killed before 2, only `index.lock` is left; it is reported (its age, and the command that clears it). Killed
//! after 2 and before 6, the journal names the operation: `series status` shows it, and the next `series
//! reroll`/`undo` finishes it first ([`recover`]): it takes over the leftover `index.lock` (the journal's pid
//! is dead), refuses if a tracked file matches neither the old nor the new tree (someone edited it since),
//! moves the branch if it was not moved yet, and sets the index and the working tree to the new tree. `series
//! undo` then restores the old tip from its backup, which reverts the operation.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::checkout::{ref_lock, Checkout};
use crate::kit::error::{Error, Result};
use crate::kit::gitcli;
use crate::store::backup::{self, Backup, Owner};

/// The file name of the journal in the repository's (per-worktree) git directory.
pub const FILE: &str = "JULES_SERIES_OP";

/// A step boundary of a rewrite, for tests that stop the process there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Locked,
    Journaled,
    Switched,
    Moved,
    Indexed,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::Locked,
        Step::Journaled,
        Step::Switched,
        Step::Moved,
        Step::Indexed,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Step::Locked => "locked",
            Step::Journaled => "journaled",
            Step::Switched => "switched",
            Step::Moved => "moved",
            Step::Indexed => "indexed",
        }
    }
}

/// Called at each step boundary (the CLI passes a test-only hook; everyone else [`no_hook`]).
pub type Hook<'a> = &'a dyn Fn(Step);

pub fn no_hook(_: Step) {}

/// What is in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    /// The reflog message of the operation: `jules series reroll: drop patch 2/3`, …
    pub operation: String,
    pub series: String,
    pub branch: String,
    /// A plain branch rewritten in place (not a series): its backups are under `refs/jules/backup/branch/`.
    #[serde(default)]
    pub plain: bool,
    pub pid: u32,
    #[serde(with = "hex_id")]
    pub old_tip: ObjectId,
    /// The tree the working tree is moved from (the old tip's, or with a fold the working tree's).
    #[serde(with = "hex_id")]
    pub from_tree: ObjectId,
    #[serde(with = "hex_id")]
    pub new_tip: ObjectId,
    #[serde(with = "hex_id")]
    pub new_tree: ObjectId,
}

mod hex_id {
    use gix::ObjectId;
    pub fn serialize<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        ObjectId::from_hex(s.as_bytes()).map_err(serde::de::Error::custom)
    }
}

pub fn path(repo: &gix::Repository) -> PathBuf {
    repo.git_dir().join(FILE)
}

impl Journal {
    /// Write the journal atomically (a temporary file renamed into place).
    pub fn write(&self, repo: &gix::Repository) -> Result<()> {
        let path = path(repo);
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| Error::io(format!("creating a journal in {}", dir.display()), e))?;
        serde_json::to_writer_pretty(tmp.as_file(), self)
            .map_err(|e| Error::wrap(format!("writing {}", path.display()), e))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        tmp.persist(&path)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e.error))?;
        Ok(())
    }

    pub fn read(repo: &gix::Repository) -> Result<Option<Journal>> {
        let path = path(repo);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Error::usage(format!(
                    "{} is damaged ({e}); if no git-jules command is running, remove it (`rm {}`) and check `git status`",
                    path.display(),
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }

    pub fn remove(repo: &gix::Repository) -> Result<()> {
        let path = path(repo);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(format!("removing {}", path.display()), e)),
        }
    }

    /// `series reroll: drop patch 2/3` (the operation without the `jules ` prefix).
    pub fn describe(&self) -> String {
        self.operation
            .strip_prefix("jules ")
            .unwrap_or(&self.operation)
            .to_owned()
    }
}

fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// An interrupted operation that [`recover`] finished.
#[derive(Debug, Clone, Serialize)]
pub struct Recovered {
    /// `series reroll: drop patch 2/3`, …
    pub operation: String,
    pub series: String,
    pub branch: String,
    #[serde(with = "hex_id")]
    pub old_tip: ObjectId,
    #[serde(with = "hex_id")]
    pub new_tip: ObjectId,
    /// The backup of the old tip the finished operation made (`None` when the crashed run had made it).
    pub backup: Option<Backup>,
}

/// Finish the operation a killed process left in the journal, if any (see the module documentation).
pub fn recover(repo: &gix::Repository) -> Result<Option<Recovered>> {
    let Some(j) = Journal::read(repo)? else {
        return Ok(None);
    };
    if process_alive(j.pid) {
        return Err(Error::usage(format!(
            "`{}` is running (pid {}); wait for it to finish",
            j.describe(),
            j.pid
        )));
    }
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::usage("a series needs a working tree; this repository is bare"))?
        .to_owned();
    // The journal was written while its process held index.lock: a leftover one is that process's, and so is
    // `index.lock.lock`, the lock a `git read-tree` it ran on that copy (GIT_INDEX_FILE=index.lock) takes and
    // leaves behind when it is killed with it.
    let mut index_lock = repo.index_path().into_os_string();
    index_lock.push(".lock");
    let index_lock = PathBuf::from(index_lock);
    let mut copy_lock = index_lock.clone().into_os_string();
    copy_lock.push(".lock");
    let _ = std::fs::remove_file(PathBuf::from(copy_lock));
    let _ = std::fs::remove_file(index_lock);

    let lock = Checkout::lock(repo)?;
    let foreign = foreign_paths(&workdir, &j)?;
    if !foreign.is_empty() {
        let shown: Vec<&str> = foreign.iter().take(10).map(String::as_str).collect();
        return Err(Error::Conflict(format!(
            "`{}` was interrupted, and these tracked files have changed since (they match neither the old nor the new tree): {}; save them elsewhere, then run `git checkout -- <file>` on each and run the command again",
            j.describe(),
            shown.join(", ")
        )));
    }
    let current = crate::store::refs::target(repo, &format!("refs/heads/{}", j.branch))?;
    let backup = if current == Some(j.old_tip) {
        if let Some(e) = ref_lock(repo, &j.branch) {
            return Err(e);
        }
        let edits = vec![backup::update(
            "HEAD",
            Some(j.old_tip),
            j.new_tip,
            true,
            &j.operation,
        )?];
        let branch = j.branch.clone();
        Some(backup::transaction(
            repo,
            if j.plain {
                Owner::Branch(&j.branch)
            } else {
                Owner::Series(&j.series)
            },
            j.old_tip,
            edits,
            &j.operation,
            || {
                Error::Conflict(format!(
                    "{branch} moved while an interrupted operation was being finished; run the command again"
                ))
            },
        )?)
    } else if current == Some(j.new_tip) {
        None
    } else {
        return Err(Error::Conflict(format!(
            "`{}` was interrupted, and {} has moved since (it is neither the old tip {} nor the new tip {}); check `git status`, then remove {} to forget the operation",
            j.describe(),
            j.branch,
            j.old_tip.to_hex_with_len(7),
            j.new_tip.to_hex_with_len(7),
            path(repo).display()
        )));
    };
    // The index and working tree to the new tree: the index first becomes the old tree, so that paths the new
    // tree lacks are removed, then `--reset -u` writes every path that differs. The check above guarantees that
    // this only overwrites what the interrupted operation itself wrote.
    //
    // Through `git read-tree`: gix 0.90 has no two-tree checkout of a populated working tree.
    let from = j.from_tree.to_string();
    let new = j.new_tree.to_string();
    gitcli::run_on_index(&workdir, lock.lock_path(), ["read-tree", &from])?;
    gitcli::run_on_index(
        &workdir,
        lock.lock_path(),
        ["read-tree", "--reset", "-u", &new],
    )?;
    let _ = gitcli::run_on_index(
        &workdir,
        lock.lock_path(),
        ["update-index", "-q", "--refresh"],
    );
    lock.commit()?;
    Journal::remove(repo)?;
    Ok(Some(Recovered {
        operation: j.describe(),
        series: j.series,
        branch: j.branch,
        old_tip: j.old_tip,
        new_tip: j.new_tip,
        backup,
    }))
}

/// Tracked paths of the working tree that match neither the tree it was moved from nor the one it was moved to,
/// and files in the way of paths only the new tree has.
fn foreign_paths(workdir: &Path, j: &Journal) -> Result<Vec<String>> {
    let differs = |tree: ObjectId| -> Result<Vec<String>> {
        let tmp = tempfile::Builder::new()
            .prefix("jules-recover-")
            .tempfile()
            .map_err(|e| Error::io("creating a temporary index", e))?;
        let t = tree.to_string();
        gitcli::run_on_index(workdir, tmp.path(), ["read-tree", &t])?;
        // `git diff TREE` compares the working tree with TREE for the paths of the (temporary) index.
        let out = gitcli::run_on_index(workdir, tmp.path(), ["diff", "--name-only", "-z", &t])?;
        Ok(split_z(&out.stdout))
    };
    let d_from = differs(j.from_tree)?;
    let d_new = differs(j.new_tree)?;
    let from_paths = {
        let t = j.from_tree.to_string();
        let out = gitcli::run(workdir, ["ls-tree", "-r", "--name-only", "-z", &t])?;
        split_z(&out.stdout)
    };
    Ok(d_new
        .into_iter()
        .filter(|p| {
            if from_paths.binary_search(p).is_ok() {
                d_from.contains(p)
            } else {
                workdir.join(p).symlink_metadata().is_ok()
            }
        })
        .collect())
}

fn split_z(out: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = out
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    v.sort();
    v
}
