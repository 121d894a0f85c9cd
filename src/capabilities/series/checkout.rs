//! The user's checkout while history is rewritten: lock the index, work on a copy, replace it only on success.
//!
//! [`Checkout::lock`] takes `index.lock` the way git does (an exclusive create), so no other git command can
//! change the index meanwhile, and copies the index into the lock file with its modification time (git's
//! racy-entry check compares entry times with the index file's). Every git command of the operation then runs
//! with `GIT_INDEX_FILE` pointing at the lock file; git locks *that* file as `index.lock.lock` and renames its
//! result over it, which keeps the protocol intact. [`Checkout::commit`] renames the lock file over the index,
//! atomically; dropping a `Checkout` without committing removes the lock and leaves the index as it was.
//!
//! Staging the working tree is done in process for the common case ([`super::stage`]); git itself does the
//! rest of the work on the working tree (and the staging it leaves to git) because gix 0.90 has no `add` with
//! all of git's rules, no index-to-tree writer, and no two-tree checkout that refuses to overwrite untracked
//! files or local changes.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gix::ObjectId;

use crate::kit::error::{Error, Result};
use crate::kit::gitcli;

pub struct Checkout {
    workdir: PathBuf,
    index: PathBuf,
    lock: PathBuf,
    committed: bool,
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).map_err(|e| Error::io(format!("resolving {}", p.display()), e))
}

impl Checkout {
    /// Lock the index of `repo`'s working tree.
    pub fn lock(repo: &gix::Repository) -> Result<Checkout> {
        let workdir = repo.workdir().ok_or_else(|| {
            Error::usage("a series needs a working tree; this repository is bare")
        })?;
        let workdir = absolute(workdir)?;
        let index = absolute(&repo.index_path())?;
        let mut lock = index.clone().into_os_string();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&lock) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(lock_error(&lock))
            }
            Err(e) => return Err(Error::io(format!("creating {}", lock.display()), e)),
        };
        let this = Checkout {
            workdir,
            index,
            lock,
            committed: false,
        };
        let mut src = match File::open(&this.index) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::usage(
                    "the repository has no index file; run `git reset` to create one",
                ))
            }
            Err(e) => return Err(Error::io(format!("reading {}", this.index.display()), e)),
        };
        std::io::copy(&mut src, &mut file)
            .map_err(|e| Error::io(format!("copying the index to {}", this.lock.display()), e))?;
        let mtime = src
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| Error::io(format!("reading {}", this.index.display()), e))?;
        file.set_modified(mtime)
            .map_err(|e| Error::io(format!("writing {}", this.lock.display()), e))?;
        Ok(this)
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The lock file, which holds the copy of the index the operation works on.
    pub fn lock_path(&self) -> &Path {
        &self.lock
    }

    fn git<const N: usize>(&self, args: [&str; N]) -> Result<std::process::Output> {
        gitcli::run_on_index(&self.workdir, &self.lock, args)
    }

    /// The tree of the (copied) index. Unmerged paths are refused.
    ///
    /// Through `git write-tree`: gix 0.90 has no index-to-tree writer (nor one that reuses the cache-tree).
    pub fn write_tree(&self) -> Result<ObjectId> {
        let out = self.git(["write-tree"]).map_err(|e| match e {
            Error::GitCommand { stderr, .. } if stderr.contains("unmerged") => Error::usage(
                format!("the index has unmerged paths; resolve the conflicts first ({stderr})"),
            ),
            e => e,
        })?;
        let hex = String::from_utf8_lossy(&out.stdout);
        ObjectId::from_hex(hex.trim().as_bytes())
            .map_err(|e| Error::wrap(format!("`git write-tree` printed {hex:?}"), e))
    }

    /// The tree of the index as it was when it was locked (the copy may have changed since): written from
    /// another copy, so neither the index nor the locked copy changes.
    ///
    /// Through `git write-tree`, for the reason given at [`Checkout::write_tree`].
    pub fn original_tree(&self) -> Result<ObjectId> {
        let dir = self.index.parent().unwrap_or(&self.workdir);
        let tmp = tempfile::Builder::new()
            .prefix("jules-index-")
            .tempfile_in(dir)
            .map_err(|e| {
                Error::io(
                    format!("creating a temporary index in {}", dir.display()),
                    e,
                )
            })?;
        std::fs::copy(&self.index, tmp.path())
            .map_err(|e| Error::io(format!("copying {}", self.index.display()), e))?;
        let out = gitcli::run_on_index(&self.workdir, tmp.path(), ["write-tree"])?;
        let hex = String::from_utf8_lossy(&out.stdout);
        ObjectId::from_hex(hex.trim().as_bytes())
            .map_err(|e| Error::wrap(format!("`git write-tree` printed {hex:?}"), e))
    }

    /// Stage everything in the copy (`git add -A`) and return its tree, whose objects go to `objects` (the
    /// caller's object memory, usually): in process when [`super::stage::stage_all`] can, else through git
    /// ([`Checkout::add_all`], [`Checkout::write_tree`]).
    pub fn stage_all(&self, objects: &gix::Repository) -> Result<ObjectId> {
        if let Some(tree) = super::stage::stage_all(objects, &self.lock)? {
            return Ok(tree);
        }
        self.add_all()?;
        self.write_tree()
    }

    /// Stage everything in the copy: new, modified and deleted files, `.gitignore` respected (`git add -A`).
    ///
    /// Through git: gix 0.90 cannot add paths to an index with git's ignore, attribute (filters, `eol`) and
    /// racy-stat rules, which decide what "the working tree" is.
    pub fn add_all(&self) -> Result<()> {
        self.git(["add", "-A"]).map(|_| ())
    }

    /// Tracked paths with staged or unstaged changes (`git status`, on the copy).
    ///
    /// Through `git status`: git's index refresh and racy-file handling are exactly what a user means by
    /// "clean" (gix's status, which [`super::stage`] uses, leaves some of git's cases to git).
    pub fn tracked_changes(&self) -> Result<Vec<String>> {
        let out = self.git(["status", "--porcelain=v1", "-z", "--untracked-files=no"])?;
        let mut paths = Vec::new();
        let mut fields = out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty());
        while let Some(entry) = fields.next() {
            if entry.len() > 3 {
                paths.push(String::from_utf8_lossy(&entry[3..]).into_owned());
            }
            if matches!(entry.first(), Some(b'R' | b'C'))
                || matches!(entry.get(1), Some(b'R' | b'C'))
            {
                fields.next();
            }
        }
        Ok(paths)
    }

    /// Refuse when tracked files have staged or unstaged changes; `what` names the operation.
    pub fn require_clean(&self, what: &str) -> Result<()> {
        let dirty = self.tracked_changes()?;
        if dirty.is_empty() {
            return Ok(());
        }
        let shown: Vec<&str> = dirty.iter().take(10).map(String::as_str).collect();
        let more = if dirty.len() > shown.len() {
            format!(" and {} more", dirty.len() - shown.len())
        } else {
            String::new()
        };
        Err(Error::usage(format!(
            "{what} needs a clean working tree, but tracked files have uncommitted changes ({}{more}); commit, fold (`git jules series reroll N`) or stash them first",
            shown.join(", ")
        )))
    }

    /// Move the working tree and the (copied) index from tree `from` to tree `to`, touching only the paths
    /// that differ (`git read-tree -m -u`). git refuses, before writing anything, when that would overwrite
    /// local changes or untracked (also ignored) files; that refusal is a conflict.
    ///
    /// Through `git read-tree -m -u`: gix 0.90 can check a tree out into an empty directory, but has no two-tree
    /// switch of a populated working tree that writes only what differs and protects local files.
    pub fn switch(&self, from: ObjectId, to: ObjectId) -> Result<()> {
        if from == to {
            return Ok(());
        }
        let (from, to) = (from.to_string(), to.to_string());
        self.git(["read-tree", "-m", "-u", &from, &to])
            .map(|_| ())
            .map_err(|e| match e {
                Error::GitCommand { stderr, .. } => Error::Conflict(format!(
                    "the working tree cannot be updated, nothing was changed: {stderr}"
                )),
                e => e,
            })
    }

    /// Replace the index with the copy.
    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.lock, &self.index)
            .map_err(|e| Error::io(format!("replacing {}", self.index.display()), e))?;
        self.committed = true;
        Ok(())
    }
}

/// The error for a lock file left where a command needs to take it: names the file, its age and the command
/// that clears it (exit 2).
pub fn lock_error(lock: &Path) -> Error {
    let age = std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| format!(", {} s old", d.as_secs()))
        .unwrap_or_default();
    Error::usage(format!(
        "{} exists{age}: another git process seems to be running in this repository; if none is (a process was killed), remove it with `rm {}` and run the command again",
        lock.display(),
        lock.display()
    ))
}

/// The first leftover lock of the files a ref transaction on HEAD and `branch` takes, if any.
pub fn ref_lock(repo: &gix::Repository, branch: &str) -> Option<Error> {
    let candidates = [
        repo.git_dir().join("HEAD.lock"),
        repo.common_dir()
            .join("refs/heads")
            .join(format!("{branch}.lock")),
    ];
    candidates
        .into_iter()
        .find(|p| p.exists())
        .map(|p| lock_error(&p))
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}
