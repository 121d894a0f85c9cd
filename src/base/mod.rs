//! Which branch a series is measured against: the one resolution rule every series command uses.
//!
//! In order: the explicit `--base`; the branch's `branch.<branch>.julesBase`; local `main`, then `master`;
//! `origin/main`, then `origin/master`. A configured base that no longer resolves is an error rather than a
//! silent fallback, since measuring against the wrong branch would verify the wrong commits.

use gix::bstr::BStr;
use gix::ObjectId;
use serde::Serialize;

use super::{resolve_commit, ser_id, BASE_KEY};
use crate::error::{Error, Result};

/// Where a base came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaseSource {
    /// Given on the command line (`--base`).
    Explicit,
    /// `branch.<branch>.julesBase`.
    Config,
    /// The branch HEAD was on (`series start` without `--base`).
    CurrentBranch,
    /// Local `main` or `master`.
    LocalDefault,
    /// `origin/main` or `origin/master`.
    RemoteDefault,
}

impl BaseSource {
    /// A few words for people: "from branch.X.julesBase", "local default", …
    pub fn describe(&self) -> &'static str {
        match self {
            BaseSource::Explicit => "given with --base",
            BaseSource::Config => "from the branch's julesBase config",
            BaseSource::CurrentBranch => "the current branch",
            BaseSource::LocalDefault => "local default branch",
            BaseSource::RemoteDefault => "origin's default branch",
        }
    }
}

/// A resolved base: the name as given or configured, and the commit it names now.
#[derive(Debug, Clone, Serialize)]
pub struct Base {
    pub name: String,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    pub source: BaseSource,
}

/// The configured base of `branch` (its short name), if any.
pub fn configured(repo: &gix::Repository, branch: &str) -> Option<String> {
    repo.config_snapshot()
        .plumbing()
        .string_by("branch", Some(BStr::new(branch)), BASE_KEY)
        .map(|v| v.to_string())
        .filter(|v| !v.trim().is_empty())
}

/// Resolve the base for `branch` (short name; `None` when HEAD is detached).
pub fn resolve(
    repo: &gix::Repository,
    explicit: Option<&str>,
    branch: Option<&str>,
) -> Result<Base> {
    if let Some(name) = explicit {
        return Ok(Base {
            name: name.to_owned(),
            commit: resolve_commit(repo, "base", name)?,
            source: BaseSource::Explicit,
        });
    }
    if let Some(branch) = branch {
        if let Some(name) = configured(repo, branch) {
            let commit = resolve_commit(repo, "base", &name).map_err(|_| {
                Error::not_found(
                    "base",
                    format!("{name} (configured in branch.{branch}.{BASE_KEY}; fix it with `git config branch.{branch}.{BASE_KEY} BRANCH` or pass --base)"),
                )
            })?;
            return Ok(Base {
                name,
                commit,
                source: BaseSource::Config,
            });
        }
    }
    defaults(repo)?.ok_or_else(|| {
        Error::usage("no base branch: there is no main, master, origin/main or origin/master; pass --base BRANCH")
    })
}

/// Local `main`/`master`, then `origin/main`/`origin/master`.
pub fn defaults(repo: &gix::Repository) -> Result<Option<Base>> {
    let candidates = [
        ("main", "refs/heads/main", BaseSource::LocalDefault),
        ("master", "refs/heads/master", BaseSource::LocalDefault),
        (
            "origin/main",
            "refs/remotes/origin/main",
            BaseSource::RemoteDefault,
        ),
        (
            "origin/master",
            "refs/remotes/origin/master",
            BaseSource::RemoteDefault,
        ),
    ];
    for (name, full, source) in candidates {
        if let Some(mut r) = repo.try_find_reference(full)? {
            if let Ok(commit) = r.peel_to_commit() {
                return Ok(Some(Base {
                    name: name.to_owned(),
                    commit: commit.id,
                    source,
                }));
            }
        }
    }
    Ok(None)
}
