//! Patch series: staging branches `jules/staging/NAME`, each measured against a base branch.
//!
//! A series is an ordinary local branch under `refs/heads/jules/staging/`; its patches are the commits of
//! `base..branch`, oldest first, numbered from 1. The base is remembered per branch in
//! `branch.<branch>.julesBase`, so several series live side by side. Everything that needs a base goes through
//! [`base::resolve`].

pub mod api;
pub mod checkout;
pub mod commit;
pub mod diff;
pub mod finalize;
pub mod format;
pub mod journal;
pub mod rangediff;
pub mod reroll;
pub mod review;
#[cfg(test)]
mod review_props;
pub mod rewrite;
pub mod stage;
pub mod start;
pub mod status;
pub mod version;

use gix::ObjectId;

use crate::kit::error::{Error, ErrorKind, Remedy, Result};

pub use crate::capabilities::base::patches;
pub use crate::capabilities::base::{
    self, range, resolve_commit, Base, BaseSource, Patch, BASE_KEY,
};

/// The prefix of every series branch, as a full ref name.
pub const STAGING_PREFIX: &str = "refs/heads/jules/staging/";

/// `refs/heads/jules/staging/NAME`.
pub fn branch_ref(name: &str) -> String {
    format!("{STAGING_PREFIX}{name}")
}

/// `jules/staging/NAME`, the branch's short name.
pub fn branch_name(name: &str) -> String {
    format!("jules/staging/{name}")
}

/// The series name of a branch (`jules/staging/NAME` or `refs/heads/jules/staging/NAME`), if it is one.
pub fn series_of_branch(branch: &str) -> Option<&str> {
    let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    short
        .strip_prefix("jules/staging/")
        .filter(|n| !n.is_empty())
}

/// The short name of the branch HEAD is on, `None` when HEAD is detached or unborn.
pub fn current_branch(repo: &gix::Repository) -> Result<Option<String>> {
    let Some(name) = repo.head_name()? else {
        return Ok(None);
    };
    Ok(name
        .as_ref()
        .category_and_short_name()
        .filter(|(c, _)| *c == gix::refs::Category::LocalBranch)
        .map(|(_, s)| s.to_string()))
}

/// The series HEAD is on, with its base and patches: what every command that rewrites a series starts from.
#[derive(Debug, Clone)]
pub struct Current {
    /// The series name; for a plain branch (see [`current_or_plain`]), the branch's short name.
    pub series: String,
    /// `jules/staging/NAME`, or the plain branch's short name.
    pub branch: String,
    /// HEAD is on a branch that is not a series (`series reroll --base B` on any branch): it is rewritten in
    /// place and not adopted (no staging branch, no `julesBase`); its backups are its own.
    pub plain: bool,
    pub tip: ObjectId,
    pub tip_tree: ObjectId,
    pub base: Base,
    pub patches: Vec<Patch>,
}

impl Current {
    /// Whose backups this branch's are.
    pub fn owner(&self) -> crate::store::backup::Owner<'_> {
        if self.plain {
            crate::store::backup::Owner::Branch(&self.branch)
        } else {
            crate::store::backup::Owner::Series(&self.series)
        }
    }
}

/// The name of the series HEAD is on, or a usage error worded by `refuse` (given what HEAD is on instead).
pub(crate) fn current_series(
    repo: &gix::Repository,
    refuse: impl FnOnce(&str) -> String,
) -> Result<String> {
    let branch = current_branch(repo)?;
    match branch.as_deref().and_then(series_of_branch) {
        Some(series) => Ok(series.to_owned()),
        None => Err(Error::usage(refuse(
            branch.as_deref().unwrap_or("a detached commit"),
        ))),
    }
}

/// The series HEAD is on. `what` names the command for messages. Refuses a bare repository, an operation
/// in progress (merge, rebase, …), an interrupted rewrite, and a HEAD that is not on a series branch.
pub fn current(repo: &gix::Repository, explicit_base: Option<&str>, what: &str) -> Result<Current> {
    current_inner(repo, explicit_base, what, false)
}

/// Like [`current`], but a HEAD on any other local branch is accepted too, as a plain branch (not adopted as a
/// series): with `--base`, or when `plain_without_base` (undo, which needs no base to restore a backup).
pub fn current_or_plain(
    repo: &gix::Repository,
    explicit_base: Option<&str>,
    what: &str,
    plain_without_base: bool,
) -> Result<Current> {
    current_inner(
        repo,
        explicit_base,
        what,
        explicit_base.is_some() || plain_without_base,
    )
}

fn current_inner(
    repo: &gix::Repository,
    explicit_base: Option<&str>,
    what: &str,
    plain_ok: bool,
) -> Result<Current> {
    if repo.workdir().is_none() {
        return Err(Error::usage(
            "a series needs a working tree; this repository is bare",
        ));
    }
    if let Some(state) = repo.state() {
        return Err(Error::usage(format!(
            "an operation is in progress ({state:?}); finish or abort it before {what}"
        )));
    }
    if let Some(j) = journal::Journal::read(repo)? {
        return Err(Error::usage(format!(
            "`{}` was interrupted (see `git jules series status`); `git jules series reroll` finishes it, `git jules series undo` reverts it",
            j.describe()
        )));
    }
    let on = current_branch(repo)?;
    let (series, branch, plain) = match on.as_deref() {
        Some(b) => match series_of_branch(b) {
            Some(series) => (series.to_owned(), branch_name(series), false),
            None if plain_ok => (b.to_owned(), b.to_owned(), true),
            None => {
                return Err(Error::needs(
                    ErrorKind::Usage,
                    format!(
                        "{what} works on the series HEAD is on, but HEAD is on {b}; check out a series branch (jules/staging/NAME), or name a base to work on {b} itself"
                    ),
                    Remedy::Base,
                ))
            }
        },
        None => {
            return Err(Error::usage(format!(
                "{what} works on the series HEAD is on, but HEAD is on a detached commit; check out a series branch (jules/staging/NAME)"
            )))
        }
    };
    let tip = repo.head_id()?.detach();
    let tip_tree = repo.find_commit(tip)?.tree_id()?.detach();
    let base = base::resolve(repo, explicit_base, Some(&branch))?;
    let patches = patches(repo, base.commit, tip)?;
    Ok(Current {
        series,
        branch,
        plain,
        tip,
        tip_tree,
        base,
        patches,
    })
}

/// The tip of a range to verify and the branch whose `julesBase` applies to it.
#[derive(Debug, Clone)]
pub struct Tip {
    pub commit: ObjectId,
    /// The local branch named by the revision (or the one HEAD is on, for `HEAD`), short name.
    pub branch: Option<String>,
}

/// Resolve `rev` (default `HEAD`): a local branch name or `refs/heads/…` brings its configured base along.
pub fn resolve_tip(repo: &gix::Repository, rev: Option<&str>) -> Result<Tip> {
    let rev = rev.unwrap_or("HEAD");
    if rev == "HEAD" || rev == "@" {
        let commit = repo
            .head_id()
            .map_err(|_| Error::usage("HEAD has no commit yet"))?
            .detach();
        return Ok(Tip {
            commit,
            branch: current_branch(repo)?,
        });
    }
    let short = rev.strip_prefix("refs/heads/").unwrap_or(rev);
    let branch = crate::store::refs::target(repo, &format!("refs/heads/{short}"))
        .ok()
        .flatten()
        .map(|_| short.to_owned());
    Ok(Tip {
        commit: resolve_commit(repo, crate::kit::error::Thing::Revision, rev)?,
        branch,
    })
}

pub(crate) fn ser_opt_id<S: serde::Serializer>(
    id: &Option<ObjectId>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.serialize_str(&id.to_string()),
        None => s.serialize_none(),
    }
}

pub(crate) use crate::kit::id::ser_oid as ser_id;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_names_of_branches() {
        assert_eq!(series_of_branch("jules/staging/a"), Some("a"));
        assert_eq!(
            series_of_branch("refs/heads/jules/staging/x.y"),
            Some("x.y")
        );
        assert_eq!(series_of_branch("jules/staging/"), None);
        assert_eq!(series_of_branch("main"), None);
        assert_eq!(branch_ref("a"), "refs/heads/jules/staging/a");
    }
}
