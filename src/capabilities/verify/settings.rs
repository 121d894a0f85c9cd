//! Verify's configuration, read in one place: the command-line values win, then git config
//! (`jules.verify.cmd`, `jules.verify.jobs`, `jules.verify.worktreeDir`), then the defaults.

use std::path::{Path, PathBuf};

use crate::kit::error::{Error, Result};

/// Free space `/dev/shm` needs before verify worktrees go there.
pub const SHM_MIN_FREE: u64 = 1 << 30;

/// Values given on the command line (each `None` when not given), and the process's temporary directory
/// (the last place for worktrees; the caller reads it, since the library reads no environment).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub cmd: Option<String>,
    pub jobs: Option<u32>,
    pub worktree_dir: Option<PathBuf>,
    pub temp_dir: PathBuf,
}

/// What a verify run is configured with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--cmd`, else `jules.verify.cmd` (blank counts as unset); `None` when neither is set.
    pub command: Option<String>,
    /// `--jobs`, else `jules.verify.jobs` (at least 1), else the number of cores.
    pub jobs: usize,
    /// Where worktrees go, best first: `--worktree-dir`, else `jules.verify.worktreeDir`, else `/dev/shm` when
    /// it has [`SHM_MIN_FREE`] free, then the temporary directory.
    pub scratch_dirs: Vec<PathBuf>,
}

impl Settings {
    pub fn from_config(repo: &gix::Repository, overrides: &Overrides) -> Result<Settings> {
        let config = repo.config_snapshot();
        let command = overrides.cmd.clone().or_else(|| command_from(&config));
        let jobs = match overrides.jobs {
            Some(j) => (j as usize).max(1),
            None => match crate::kit::settings::integer(repo, "jules.verify.jobs", 1)? {
                Some(j) => j as usize,
                None => std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            },
        };
        let configured_dir = config
            .trusted_path("jules.verify.worktreeDir")
            .map_err(|e| {
                Error::usage(format!(
                    "jules.verify.worktreeDir is not a usable path: {e}"
                ))
            })?;
        let scratch_dirs = scratch_dirs(
            overrides.worktree_dir.clone().or(configured_dir),
            &overrides.temp_dir,
        );
        Ok(Settings {
            command,
            jobs,
            scratch_dirs,
        })
    }

    /// The options of a run with this configuration, `None` when no command is configured.
    pub fn options(&self, keep_going: bool, force: bool) -> Option<super::Options> {
        Some(super::Options {
            command: self.command.clone()?,
            jobs: self.jobs,
            keep_going,
            force,
            scratch_dirs: self.scratch_dirs.clone(),
        })
    }
}

/// `jules.verify.cmd`, unless unset or blank.
pub fn command(repo: &gix::Repository) -> Option<String> {
    command_from(&repo.config_snapshot())
}

fn command_from(config: &gix::config::Snapshot<'_>) -> Option<String> {
    config
        .string("jules.verify.cmd")
        .map(|s| s.to_string())
        .filter(|s| !s.trim().is_empty())
}

/// Candidate directories for the worktrees, best first.
pub fn scratch_dirs(explicit: Option<PathBuf>, temp_dir: &Path) -> Vec<PathBuf> {
    if let Some(d) = explicit {
        return vec![d];
    }
    let mut dirs = Vec::new();
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() && free_bytes(&shm).is_some_and(|f| f >= SHM_MIN_FREE) {
        dirs.push(shm);
    }
    dirs.push(temp_dir.to_owned());
    dirs
}

fn free_bytes(path: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(path).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}
