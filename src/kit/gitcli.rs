//! The fence around the `git` binary.
//!
//! gix does the reading and writing; this module exists for what gix 0.90 cannot do, and every caller says
//! why: pushing (gix has no send-pack), and porcelain operations whose exact git semantics users rely on
//! (checking out a branch into the user's working tree, `git add -A` with all of git's ignore rules, moving a
//! populated working tree and index between two trees with `git read-tree -m -u`).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::kit::error::{Error, Result};

/// Build a `git` command that runs in `dir` (the work tree or the git dir) with a stable, non-interactive
/// environment: no pager, no prompts, messages in English so they can be parsed.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    cmd
}

/// Run git with `args` in `dir`; error with its stderr unless it exits 0.
pub fn run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_with(command(dir), args)
}

/// Run git with `args` in `dir` on the index file `index` instead of the repository's (`GIT_INDEX_FILE`), so
/// that the real index is only replaced, atomically, once an operation has succeeded.
pub fn run_on_index<I, S>(dir: &Path, index: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.env("GIT_INDEX_FILE", index);
    run_with(cmd, args)
}

fn run_with<I, S>(mut cmd: Command, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<S> = args.into_iter().collect();
    let shown = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd
        .args(&args)
        .output()
        .map_err(|e| Error::io(format!("running `git {shown}` (is git on PATH?)"), e))?;
    if !out.status.success() {
        return Err(Error::GitCommand {
            args: shown,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out)
}

/// The directory to run git in for `repo`: its work tree, else its git dir.
pub fn dir_of(repo: &gix::Repository) -> &Path {
    repo.workdir().unwrap_or_else(|| repo.git_dir())
}
