//! `series start`: create `jules/staging/NAME` at the base, remember the base, and check the branch out.

use std::path::Path;

use gix::ObjectId;
use serde::Serialize;

use super::{
    base, branch_name, branch_ref, current_branch, resolve_commit, ser_id, Base, BaseSource,
};
use crate::kit::error::{Error, Result};
use crate::{kit::gitcli, kit::names, store::refs};

#[derive(Debug, Serialize)]
pub struct Started {
    pub series: String,
    pub branch: String,
    pub base: Base,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
}

/// Start series `name` from `base` (default: the current branch, else the default base) and check it out.
/// Refuses a working tree with tracked changes, a repository in the middle of a merge or rebase, and an
/// existing series of that name. Untracked files are carried over, as `git checkout` does.
pub fn start(repo: &mut gix::Repository, name: &str, base: Option<&str>) -> Result<Started> {
    names::validate_name("series", name)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::usage("a series needs a working tree; this repository is bare"))?
        .to_owned();
    if let Some(state) = repo.state() {
        return Err(Error::usage(format!(
            "an operation is in progress ({state:?}); finish or abort it first"
        )));
    }
    if repo.head_id().is_err() {
        return Err(Error::usage(
            "HEAD has no commit yet: make a first commit, then start a series",
        ));
    }
    let dirty = tracked_changes(&workdir)?;
    if !dirty.is_empty() {
        let shown: Vec<&str> = dirty.iter().take(10).map(String::as_str).collect();
        let more = if dirty.len() > shown.len() {
            format!(" and {} more", dirty.len() - shown.len())
        } else {
            String::new()
        };
        return Err(Error::usage(format!(
            "the working tree has uncommitted changes to tracked files ({}{more}); commit or stash them first",
            shown.join(", ")
        )));
    }

    let base = match base {
        Some(b) => base::resolve(repo, Some(b), None)?,
        None => match current_branch(repo)? {
            Some(branch) => Base {
                commit: resolve_commit(repo, crate::kit::error::Thing::Base, &branch)?,
                name: branch,
                source: BaseSource::CurrentBranch,
            },
            None => base::resolve(repo, None, None)?,
        },
    };

    let full = branch_ref(name);
    let branch = branch_name(name);
    if refs::target(repo, &full)?.is_some() {
        return Err(Error::usage(format!(
            "series {name} already exists (branch {branch}); check it out or pick another name"
        )));
    }
    if !refs::cas(
        repo,
        &full,
        None,
        base.commit,
        &format!("jules: series start from {}", base.name),
    )? {
        return Err(Error::usage(format!(
            "series {name} already exists (branch {branch})"
        )));
    }
    if let Err(e) = crate::capabilities::base::set_configured(repo, &branch, Some(&base.name))
        .and_then(|()| checkout(&workdir, &branch))
    {
        // Leave nothing behind: the branch was created a moment ago and nobody else uses it yet.
        let _ = refs::cas_delete(repo, &full, base.commit);
        let _ = crate::capabilities::base::set_configured(repo, &branch, None);
        return Err(e);
    }
    Ok(Started {
        series: name.to_owned(),
        branch,
        commit: base.commit,
        base,
    })
}

/// Paths with staged or unstaged changes to tracked files.
///
/// Through `git status`: the `status` feature of gix is not compiled in, and git's index refresh and racy-file
/// handling are exactly the semantics a user expects from "is my tree clean".
fn tracked_changes(workdir: &Path) -> Result<Vec<String>> {
    let out = gitcli::run(
        workdir,
        ["status", "--porcelain=v1", "-z", "--untracked-files=no"],
    )?;
    let mut paths = Vec::new();
    let mut fields = out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() > 3 {
            paths.push(String::from_utf8_lossy(&entry[3..]).into_owned());
        }
        // A rename or copy is followed by its source path.
        if matches!(entry.first(), Some(b'R' | b'C')) || matches!(entry.get(1), Some(b'R' | b'C')) {
            fields.next();
        }
    }
    Ok(paths)
}

/// Switch the user's working tree to `branch`.
///
/// Through `git checkout`: gix 0.90 cannot switch a populated working tree and index between commits
/// while carrying untracked files over and refusing to overwrite them, which is what users rely on.
fn checkout(workdir: &Path, branch: &str) -> Result<()> {
    gitcli::run(workdir, ["checkout", "-q", branch]).map(|_| ())
}
