//! A base and the commits on top of it: which branch a range of patches is measured against (the one
//! resolution rule every series command, verify and weave use), the `branch.<b>.julesBase` config that
//! remembers it (one reader, one editor), and the patches of `base..tip`.
//!
//! Below both `series` and `verify`, which both need it.
//!
//! In order: the explicit `--base`; the branch's `branch.<branch>.julesBase`; local `main`, then `master`;
//! `origin/main`, then `origin/master`. A configured base that no longer resolves is an error rather than a
//! silent fallback, since measuring against the wrong branch would verify the wrong commits.

pub mod range;

use gix::bstr::BStr;
use gix::ObjectId;
use serde::Serialize;

use crate::kit::error::{Error, ErrorKind, Remedy, Result, ResultExt};
use crate::kit::id::ser_oid as ser_id;

/// The config key (in the branch's section) that stores a branch's base.
pub const BASE_KEY: &str = "julesBase";

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
    /// The base a recorded series version names (`refs/jules/series/…`).
    Version,
}

impl BaseSource {
    /// A few words for people: "from branch.X.julesBase", "local default", …
    pub fn describe(&self) -> &'static str {
        match self {
            BaseSource::Explicit => "given with --base",
            BaseSource::Config => "from the branch's julesBase config",
            BaseSource::CurrentBranch => "the current branch",
            BaseSource::LocalDefault => "local default branch",
            BaseSource::Version => "recorded in the series version",
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

impl Base {
    /// "main (the current branch) at 1a2b3c4"
    pub fn describe(&self) -> String {
        format!(
            "{} ({}) at {}",
            self.name,
            self.source.describe(),
            self.commit.to_hex_with_len(7)
        )
    }
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
            commit: resolve_commit(repo, crate::kit::error::Thing::Base, name)?,
            source: BaseSource::Explicit,
        });
    }
    if let Some(branch) = branch {
        if let Some(name) = configured(repo, branch) {
            let commit = resolve_commit(repo, crate::kit::error::Thing::Base, &name).map_err(|_| {
                Error::needs(
                    ErrorKind::NotFound,
                    format!("base not found: {name} (configured in branch.{branch}.{BASE_KEY}; fix it with `git config branch.{branch}.{BASE_KEY} BRANCH`)"),
                    Remedy::Base,
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
        Error::not_found(
            crate::kit::error::Thing::BaseBranch,
            "none of main, master, origin/main, origin/master exists",
        )
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

/// Set (`Some`) or remove (`None`) `branch.<branch>.julesBase` in the repository's local config: the one
/// editor of that key. Removing it also removes the branch's section when nothing else is left in it.
pub fn set_configured(repo: &mut gix::Repository, branch: &str, base: Option<&str>) -> Result<()> {
    let path = repo
        .config_path(gix::config::Source::Local)
        .context(|| "finding the repository's config file".into())?;
    let mut tx = repo
        .config_file_mut(&path)
        .context(|| format!("locking {}", path.display()))?;
    match base {
        Some(base) => {
            tx.set_raw_value_by("branch", Some(BStr::new(branch)), BASE_KEY, base)
                .map_err(|e| Error::wrap(format!("setting branch.{branch}.{BASE_KEY}"), e))?;
        }
        None => {
            let empty = match tx.section_mut("branch", Some(BStr::new(branch))) {
                Ok(mut section) => {
                    section.remove(BASE_KEY);
                    section.num_values() == 0
                }
                Err(_) => false,
            };
            if empty {
                let _ = tx.remove_section("branch", Some(BStr::new(branch)));
            }
        }
    }
    tx.commit()
        .context(|| format!("writing {}", path.display()))?;
    repo.reload()?;
    Ok(())
}

/// Resolve a revision (branch, remote branch, tag, commit id, `HEAD~2`, …) to a commit.
pub fn resolve_commit(
    repo: &gix::Repository,
    what: crate::kit::error::Thing,
    rev: &str,
) -> Result<ObjectId> {
    let id = repo
        .rev_parse_single(rev)
        .map_err(|_| Error::not_found(what, rev))?;
    let commit = id
        .object()?
        .peel_to_commit()
        .map_err(|_| Error::usage(format!("{what} {rev} is not a commit")))?;
    Ok(commit.id)
}

/// One patch: a commit of `base..tip`.
#[derive(Debug, Clone, Serialize)]
pub struct Patch {
    /// 1-based position, oldest first.
    pub index: usize,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub tree: ObjectId,
    /// The first line of the commit message.
    pub summary: String,
}

/// The patches of `base..tip`, oldest first.
pub fn patches(repo: &gix::Repository, base: ObjectId, tip: ObjectId) -> Result<Vec<Patch>> {
    range::oldest_first(repo, base, tip)?
        .into_iter()
        .enumerate()
        .map(|(i, id)| {
            let commit = repo.find_commit(id)?;
            let summary = commit.message()?.summary().to_string();
            Ok(Patch {
                index: i + 1,
                commit: id,
                tree: commit.tree_id()?.detach(),
                summary,
            })
        })
        .collect()
}
