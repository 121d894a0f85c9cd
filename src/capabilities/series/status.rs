//! `series status` and `series list`: a series, its base, its numbered patches and their cached verdicts.
//!
//! The use cases are [`read`] and [`read_all`] on a [`Workspace`]: they resolve the verify command whose
//! cached results they show (the one given, else `jules.verify.cmd`) and assemble the one value the CLI's
//! `--json`, the MCP server's `series_status` and the web's series page all show; [`patch_notes`] adds what
//! the web shows beside each patch (its rationale and review notes).

use gix::ObjectId;
use serde::Serialize;

use super::{
    base, branch_name, branch_ref, current_branch, patches, ser_id, series_of_branch, Base, Patch,
    STAGING_PREFIX,
};
use crate::capabilities::verify::cache::{Cache, Verdict};
use crate::capabilities::workspace::Workspace;
use crate::kit::error::{Error, Result};

/// A patch's verification state for the configured command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyState {
    Pass,
    Fail,
    /// No cached result for this tree and command.
    Unverified,
    /// No verify command is configured, so there is nothing to look up.
    Unknown,
}

#[derive(Debug, Clone, Serialize)]
pub struct PatchStatus {
    #[serde(flatten)]
    pub patch: Patch,
    pub short: String,
    pub verify: VerifyState,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeriesStatus {
    pub series: String,
    pub branch: String,
    /// HEAD is on this series' branch.
    pub current: bool,
    pub base: Base,
    #[serde(serialize_with = "ser_id")]
    pub tip: ObjectId,
    /// The command whose cached results `verify` shows (`jules.verify.cmd` or `--cmd`).
    pub verify_command: Option<String>,
    pub patches: Vec<PatchStatus>,
    /// A rewrite of this series that a killed process left unfinished (`series reroll: drop patch 2/3`); the
    /// next `series reroll` finishes it, `series undo` reverts it. Absent when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

impl SeriesStatus {
    /// (passed, failed, unverified) counts.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.patches.iter().filter(|p| p.verify == s).count();
        (
            n(VerifyState::Pass),
            n(VerifyState::Fail),
            self.patches.len() - n(VerifyState::Pass) - n(VerifyState::Fail),
        )
    }
}

/// What `series status` is asked.
#[derive(Debug, Clone, Default)]
pub struct StatusInput {
    /// The series (default: the one HEAD is on).
    pub name: Option<String>,
    /// Measure against this base instead of the configured one.
    pub base: Option<String>,
    /// Show the cached results of this command (default: `jules.verify.cmd`).
    pub cmd: Option<String>,
}

/// The verify command whose cached results a status shows: the one given, else `jules.verify.cmd`. Blank
/// is none either way (as `jules.verify.cmd` set to blank is): no command was ever run as "".
pub(crate) fn command(repo: &gix::Repository, given: Option<&str>) -> Option<String> {
    match given {
        Some(c) if !c.trim().is_empty() => Some(c.to_owned()),
        Some(_) => None,
        None => crate::capabilities::verify::settings::command(repo),
    }
}

/// `series status` as a use case: the status of one series (see [`StatusInput`]).
pub fn read(ws: &Workspace, input: &StatusInput) -> Result<SeriesStatus> {
    let repo = ws.repo();
    let cmd = command(&repo, input.cmd.as_deref());
    status(
        &repo,
        input.name.as_deref(),
        input.base.as_deref(),
        cmd.as_deref(),
    )
}

/// `series list` as a use case: every series, by name, with the cached results of `cmd` (default:
/// `jules.verify.cmd`).
pub fn read_all(ws: &Workspace, cmd: Option<&str>) -> Result<Vec<SeriesStatus>> {
    let repo = ws.repo();
    let cmd = command(&repo, cmd);
    list(&repo, cmd.as_deref())
}

/// What is said about a patch beside its status: the `Rationale:` trailers of its message and its review
/// notes, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct PatchNotes {
    pub rationale: Vec<String>,
    pub reviews: Vec<super::review::NoteLine>,
}

/// The rationale and review notes of a listed patch.
pub fn patch_notes(ws: &Workspace, patch: &PatchStatus) -> Result<PatchNotes> {
    let repo = ws.repo();
    let commit = repo.find_commit(patch.patch.commit)?;
    let message = commit.message_raw_sloppy().to_string();
    Ok(PatchNotes {
        rationale: crate::kit::trailers::parse(&message)
            .into_iter()
            .filter(|t| t.key.eq_ignore_ascii_case("Rationale"))
            .map(|t| t.value)
            .collect(),
        reviews: super::review::notes_of(&repo, patch.patch.commit)?,
    })
}

/// The status of series `name` (default: the one HEAD is on).
pub fn status(
    repo: &gix::Repository,
    name: Option<&str>,
    explicit_base: Option<&str>,
    command: Option<&str>,
) -> Result<SeriesStatus> {
    let current = current_branch(repo)?;
    let name = match name {
        Some(n) => n.to_owned(),
        None => current
            .as_deref()
            .and_then(series_of_branch)
            .map(str::to_owned)
            .ok_or_else(|| {
                Error::usage(format!(
                    "HEAD is not on a series branch but on {}; name a series (see `git jules series list`) or start one with `git jules series start NAME`",
                    current.as_deref().unwrap_or("a detached commit")
                ))
            })?,
    };
    let mut cache = Cache::open(repo)?;
    one(
        repo,
        &name,
        explicit_base,
        command,
        current.as_deref(),
        &mut cache,
    )
}

/// Every series in the repository, by name.
pub fn list(repo: &gix::Repository, command: Option<&str>) -> Result<Vec<SeriesStatus>> {
    let current = current_branch(repo)?;
    let mut names = Vec::new();
    for r in repo.references()?.prefixed(STAGING_PREFIX)? {
        let r = r.map_err(|e| Error::wrap("listing series branches", e))?;
        if let Some(n) = series_of_branch(&r.name().as_bstr().to_string()) {
            names.push(n.to_owned());
        }
    }
    names.sort();
    let mut cache = Cache::open(repo)?;
    names
        .iter()
        .map(|n| one(repo, n, None, command, current.as_deref(), &mut cache))
        .collect()
}

fn one(
    repo: &gix::Repository,
    name: &str,
    explicit_base: Option<&str>,
    command: Option<&str>,
    current: Option<&str>,
    cache: &mut Cache,
) -> Result<SeriesStatus> {
    let branch = branch_name(name);
    let tip = crate::store::refs::target(repo, &branch_ref(name))?
        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Series, name))?;
    let base = base::resolve(repo, explicit_base, Some(&branch))?;
    let key = command.map(crate::capabilities::verify::cache::command_key);
    let abbrev = crate::kit::abbrev::Abbreviator::new(repo);
    let patches = patches(repo, base.commit, tip)?
        .into_iter()
        .map(|p| {
            let verify = match &key {
                None => VerifyState::Unknown,
                Some(k) => match cache.get(repo, p.tree, k)?.map(|e| e.result) {
                    Some(Verdict::Pass) => VerifyState::Pass,
                    Some(Verdict::Fail) => VerifyState::Fail,
                    None => VerifyState::Unverified,
                },
            };
            Ok(PatchStatus {
                short: abbrev.short(p.commit),
                patch: p,
                verify,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(SeriesStatus {
        series: name.to_owned(),
        current: current == Some(branch.as_str()),
        branch,
        base,
        tip,
        verify_command: command.map(str::to_owned),
        patches,
        interrupted: super::journal::Journal::read(repo)?
            .filter(|j| j.series == name)
            .map(|j| j.describe()),
    })
}
