//! Temporary linked worktrees for verify jobs: one per job, reused from commit to commit, removed at the end.
//!
//! All worktrees of one run live in a fresh directory `jules-verify-XXXXXX` under the scratch directory (tmpfs
//! when available: creating thousands of files on a disk costs seconds). The first commit of a job is checked
//! out by gix (`add_worktree`, detached; one such full checkout at a time), then settled (`settle`).
//! Later commits move the same worktree in process (`step`: a tree diff, an lstat of every index entry,
//! only the files that differ or that the command changed are written), which keeps untracked files (build
//! caches) between commits; what that move does not reproduce goes to `git checkout -f --detach`.
//! Dropping the pool removes every worktree and its registration, also after an error or an interrupt. Each
//! worktree is locked (as `git worktree lock` does) with a reason naming the owner's pid, so `git worktree prune`
//! leaves it alone while the run lasts and the next run can remove what a killed one left behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use gix::ObjectId;

use crate::kit::error::{Error, Result, ResultExt};
use crate::kit::gitcli;

mod step;

/// The prefix of a run's scratch directory, as `git worktree list` shows it.
pub const DIR_PREFIX: &str = "jules-verify-";

pub struct Pool {
    repo: gix::ThreadSafeRepository,
    root: Option<tempfile::TempDir>,
    created: Mutex<Vec<PathBuf>>,
    registering: Mutex<()>,
    checking_out: Mutex<()>,
}

/// One job's worktree and the commit it has checked out.
pub struct Worktree {
    pub path: PathBuf,
    pub commit: ObjectId,
    /// The worktree's own repository (its index, its `HEAD`).
    repo: gix::Repository,
    /// The index as last written, for the next in-process move; `None`: the next move goes through git.
    tracked: Option<step::Tracked>,
}

impl Pool {
    /// A pool whose worktrees live in a new directory in the first usable of `scratch_dirs`.
    pub fn new(repo: &gix::Repository, scratch_dirs: &[PathBuf]) -> Result<Pool> {
        let mut last_err = None;
        for dir in scratch_dirs {
            match tempfile::Builder::new().prefix(DIR_PREFIX).tempdir_in(dir) {
                Ok(root) => {
                    return Ok(Pool {
                        repo: with_reflog_identity(repo)?.into_sync(),
                        root: Some(root),
                        created: Mutex::new(Vec::new()),
                        registering: Mutex::new(()),
                        checking_out: Mutex::new(()),
                    })
                }
                Err(e) => {
                    last_err = Some(Error::io(
                        format!("creating a scratch directory in {}", dir.display()),
                        e,
                    ))
                }
            }
        }
        Err(last_err
            .unwrap_or_else(|| Error::Other("no scratch directory for verify worktrees".into())))
    }

    /// A thread-local handle on the repository.
    pub fn repo(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The run's scratch directory (worktrees and output logs).
    pub fn root(&self) -> &Path {
        self.root.as_ref().expect("present until drop").path()
    }

    /// Add worktree number `n` with `commit` checked out.
    pub fn add(&self, n: usize, commit: ObjectId, interrupt: &AtomicBool) -> Result<Worktree> {
        let path = self.root().join(format!("wt{n}"));
        let repo = self.repo.to_thread_local();
        self.created
            .lock()
            .expect("no panics while held")
            .push(path.clone());
        // One full checkout at a time: gix's checkout already keeps every core busy, so two at once only
        // finish together, where one after the other lets the first job start its command while the next
        // worktree is written (a command that waits or sleeps leaves the cores to it).
        let _one_checkout = self.checking_out.lock().unwrap_or_else(|p| p.into_inner());
        // Registration reads every other registration and writes its own files non-atomically, so two at
        // once can see each other half-written: register one at a time.
        let prepared = {
            let _one_at_a_time = self.registering.lock().unwrap_or_else(|p| p.into_inner());
            repo.prepare_add_worktree(&path, gix::worktree::add::Head::Detached(commit), interrupt)
        }
        .context(|| format!("adding a verify worktree at {}", path.display()))?;
        let (wt_repo, _) = prepared
            .checkout(gix::progress::Discard, interrupt)
            .context(|| format!("checking out {commit} in {}", path.display()))?;
        // Locked like `git worktree lock`: `git worktree prune` leaves it alone while we run, and a later
        // verify can tell a leftover of a killed run from a live one.
        let _ = std::fs::write(
            wt_repo.git_dir().join("locked"),
            format!("{LOCK_REASON}{})\n", std::process::id()),
        );
        settle(&wt_repo, &path);
        let tracked = step::track(&wt_repo);
        Ok(Worktree {
            path,
            commit,
            repo: wt_repo,
            tracked,
        })
    }

    /// Move `wt` to `commit`: tracked files are forced to the commit's content, untracked files stay.
    ///
    /// In process (`step`) when nothing unusual is in the way; else through `git checkout -f`, the
    /// reference for every case the in-process move does not reproduce (gix 0.90 can only check a tree out
    /// into an empty directory). Hooks are switched off: a user's post-checkout hook has no business running
    /// in a scratch worktree.
    pub fn checkout(&self, wt: &mut Worktree, commit: ObjectId) -> Result<()> {
        if wt.commit == commit {
            return Ok(());
        }
        if let Some(mut tracked) = wt.tracked.take() {
            if step::advance(&wt.repo, &mut tracked, wt.commit, commit).is_ok() {
                wt.tracked = Some(tracked);
                wt.commit = commit;
                return Ok(());
            }
        }
        let mut cmd = gitcli::command(&wt.path);
        super::exec::isolate(&mut cmd);
        let hex = commit.to_string();
        let out = cmd
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "checkout",
                "-q",
                "-f",
                "--detach",
                &hex,
            ])
            .output()
            .map_err(|e| Error::io("running `git checkout` (is git on PATH?)", e))?;
        if !out.status.success() {
            return Err(Error::GitCommand {
                args: format!("checkout -f --detach {hex} (in {})", wt.path.display()),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        wt.commit = commit;
        wt.tracked = step::track(&wt.repo);
        Ok(())
    }

    /// Remove `wt` now, for a job that has no more commits to run: its files go while other jobs may still be
    /// running their last commands, instead of every worktree one after another once all are done. What
    /// cannot be removed stays listed, for [`close`](Self::close) to try again and report.
    pub fn release(&self, wt: Worktree) {
        let repo = self.repo.to_thread_local();
        // Removal rewrites the registrations that `add` reads: one at a time, like registering.
        let removed = {
            let _one_at_a_time = self.registering.lock().unwrap_or_else(|p| p.into_inner());
            repo.remove_worktree(
                &wt.path,
                gix::worktree::remove::Force::OverrideLock,
                gix::progress::Discard,
            )
        };
        if removed.is_ok() {
            self.created
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|p| *p != wt.path);
        }
    }

    /// Remove every worktree and the scratch directory. Errors are collected, not fatal: what cannot be
    /// removed is reported so the user can run `git worktree prune`.
    pub fn close(mut self) -> Result<()> {
        self.cleanup()
    }

    fn cleanup(&mut self) -> Result<()> {
        let paths = std::mem::take(&mut *self.created.lock().unwrap_or_else(|p| p.into_inner()));
        let repo = self.repo.to_thread_local();
        let mut failed = Vec::new();
        for path in paths {
            if !path.join(".git").exists() {
                let _ = std::fs::remove_dir_all(&path);
                continue;
            }
            if let Err(e) = repo.remove_worktree(
                &path,
                gix::worktree::remove::Force::OverrideLock,
                gix::progress::Discard,
            ) {
                failed.push(format!("{}: {e:#}", path.display()));
            }
        }
        if let Some(root) = self.root.take() {
            let shown = root.path().display().to_string();
            if let Err(e) = root.close() {
                failed.push(format!("{shown}: {e}"));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(Error::Other(format!(
                "could not remove verify worktrees ({}); run `git worktree prune` after deleting them",
                failed.join("; ")
            )))
        }
    }
}

/// `repo`, or, when no committer identity is configured, `repo` opened again with a fallback identity for
/// the worktrees' reflogs. gix writes a reflog entry for a new worktree's `HEAD` and refuses to without a
/// committer, where `git worktree add` falls back to the user's login name; a sandbox with no `user.name`
/// must still be able to verify (nothing is committed: the identity only labels a scratch reflog). The
/// fallback goes through open options, not the in-memory snapshot, because gix opens each new worktree's
/// repository afresh with the parent's options.
fn with_reflog_identity(repo: &gix::Repository) -> Result<gix::Repository> {
    if repo.committer().is_some() {
        return Ok(repo.clone());
    }
    let options = repo.open_options().clone().config_overrides([
        "gitoxide.committer.nameFallback=git-jules verify",
        "gitoxide.committer.emailFallback=git-jules@localhost",
    ]);
    gix::open_opts(repo.git_dir(), options)
        .context(|| "opening the repository for verify worktrees".into())
}

/// The lock reason of a verify worktree, followed by the owner's process id and `)`.
const LOCK_REASON: &str = "git-jules verify (pid ";

/// Remove the worktrees of verify runs that were killed before they could clean up (their owner is gone).
/// Best effort: whatever cannot be removed is left for `git worktree remove`.
pub fn remove_leftovers(repo: &gix::Repository) {
    let Ok(worktrees) = repo.worktrees() else {
        return;
    };
    for wt in worktrees {
        let Some(pid) = wt.lock_reason().and_then(|r| {
            r.to_string()
                .strip_prefix(LOCK_REASON)?
                .trim_end()
                .strip_suffix(')')?
                .parse::<i32>()
                .ok()
        }) else {
            continue;
        };
        if process_alive(pid) {
            continue;
        }
        let Ok(base) = wt.base() else { continue };
        let _ = repo.remove_worktree(
            &base,
            gix::worktree::remove::Force::OverrideLock,
            gix::progress::Discard,
        );
        if let Some(run_dir) = base.parent().filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(DIR_PREFIX))
        }) {
            let _ = std::fs::remove_dir_all(run_dir);
        }
    }
}

fn process_alive(pid: i32) -> bool {
    // kill(2) with no signal only checks that the process exists and may be signalled; EPERM means it
    // exists under another user.
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// Make a fresh checkout's index entries clean for git at once: backdate the files two seconds and store
/// their new stat data in the worktree's index.
///
/// git takes an entry as "racily clean" while the file's mtime is not older than the index file (at second
/// granularity in common builds), and so does the in-process move (to the nanosecond). Right after a checkout
/// that is every entry: the first move would compare all 3000 files' content, and a `git status` or `git
/// checkout` within that second re-hashes all of them (130 ms instead of 15 ms). Only a fresh checkout is
/// backdated: no command has run in it yet, so no build output can end up newer than a source it has not
/// seen. Best effort: an entry left out merely stays slow, since its stored stat no longer matches and its
/// content is compared, which is always correct.
fn settle(wt_repo: &gix::Repository, workdir: &Path) {
    use gix::index::entry::Mode;
    use rustix::fs::{AtFlags, Timespec, Timestamps};
    let Ok(mut index) = wt_repo.open_index() else {
        return;
    };
    let Ok(root) = step::open_dir(workdir) else {
        return;
    };
    let Ok(past) = (std::time::SystemTime::now() - std::time::Duration::from_secs(2))
        .duration_since(std::time::UNIX_EPOCH)
    else {
        return;
    };
    let times = Timestamps {
        last_access: Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        last_modification: Timespec {
            tv_sec: past.as_secs() as _,
            tv_nsec: past.subsec_nanos() as _,
        },
    };
    // Two system calls a file, relative to the worktree's directory, on several threads: this runs before a
    // job's first command, once per job.
    let stats = crate::kit::par::map_in_chunks(index.entries(), step::CHUNK, |e| {
        if e.mode != Mode::FILE && e.mode != Mode::FILE_EXECUTABLE {
            return None;
        }
        let path: &[u8] = e.path(&index);
        rustix::fs::utimensat(&root, path, &times, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        step::stat_at(&root, e.path(&index)).map(|(stat, _)| stat)
    });
    for (entry, stat) in index.entries_mut().iter_mut().zip(stats) {
        if let Some(stat) = stat {
            entry.stat = stat;
        }
    }
    let _ = index.write(Default::default());
}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.root.is_some() {
            let _ = self.cleanup();
        }
    }
}
