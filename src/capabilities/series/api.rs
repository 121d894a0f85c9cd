//! The series use cases a frontend offers besides the rewrites, as typed calls on a [`Workspace`]:
//! verifying a range as `git jules verify` does (its base found the series' way), and the recorded versions
//! of a series (`series version`, `versions`, `show`, `range-diff`, `interdiff`, `list --all`: record, list,
//! show one with its reviews, compare two). Their answers are the `--json` documents of docs/json.md; a
//! comparison also carries, unserialised, what it says about versions that are not their persona's.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use super::version::{self as ver, parse_spec, parse_version, Version};
use crate::capabilities::verify::{self, CommitResult, Report};
use crate::capabilities::workspace::Workspace;
use crate::{Error, ErrorKind, Remedy, Result};

/// What to verify and how; every field left out falls back to the configuration, as for the CLI.
#[derive(Debug, Clone, Default)]
pub struct VerifyInput {
    /// The tip (default `HEAD`); a local branch brings its configured base along.
    pub rev: Option<String>,
    /// The base (default: the branch's base, then main, master, origin/main, origin/master).
    pub base: Option<String>,
    /// The command (default `jules.verify.cmd`).
    pub cmd: Option<String>,
    pub jobs: Option<u32>,
    pub keep_going: bool,
    /// Ignore cached results.
    pub force: bool,
    /// Where the temporary worktrees go (default `jules.verify.worktreeDir`, then `/dev/shm`, then the
    /// temporary directory).
    pub worktree_dir: Option<PathBuf>,
}

/// A verify run's report and what it ran against.
#[derive(Debug, Clone)]
pub struct Verified {
    pub report: Report,
    /// The base's name, as resolved.
    pub base: String,
    /// Whether the tip is the base itself (nothing of a series to verify).
    pub on_base: bool,
}

/// A verify run resolved and ready: what [`run`] will do, for a frontend to show before it starts.
#[derive(Debug, Clone)]
pub struct VerifyPlan {
    pub base: crate::capabilities::base::Base,
    pub tip: super::Tip,
    pub options: verify::Options,
}

impl VerifyPlan {
    /// Whether the tip is the base itself (nothing of a series to verify).
    pub fn on_base(&self) -> bool {
        self.base.commit == self.tip.commit
            || self.tip.branch.as_deref() == Some(self.base.name.as_str())
    }
}

/// Resolve the command, the tip and the base of a verify run.
pub fn plan(ws: &Workspace, input: &VerifyInput) -> Result<VerifyPlan> {
    let repo = ws.repo();
    let settings = verify::Settings::from_config(
        &repo,
        &verify::Overrides {
            cmd: input.cmd.clone(),
            jobs: input.jobs,
            worktree_dir: input.worktree_dir.clone(),
            temp_dir: ws.scratch_dir(),
        },
    )?;
    let Some(options) = settings.options(input.keep_going, input.force) else {
        return Err(Error::needs(
            ErrorKind::Usage,
            "no verify command",
            Remedy::VerifyCommand,
        ));
    };
    let tip = super::resolve_tip(&repo, input.rev.as_deref())?;
    let base = super::base::resolve(&repo, input.base.as_deref(), tip.branch.as_deref())?;
    Ok(VerifyPlan { base, tip, options })
}

/// The commits a plan covers (for a progress count).
pub fn count(ws: &Workspace, plan: &VerifyPlan) -> Result<usize> {
    Ok(super::patches(&ws.repo(), plan.base.commit, plan.tip.commit)?.len())
}

/// Run a plan: the verify command on every commit of base..tip in private worktrees, with the notes
/// cache. `interrupt` stops it (the report says so); `on_result` sees each commit's result as it comes.
pub fn run(
    ws: &Workspace,
    plan: VerifyPlan,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Verified> {
    let on_base = plan.on_base();
    let base = plan.base.name.clone();
    let report = verify::verify(
        &ws.repo(),
        plan.base,
        plan.tip.commit,
        &plan.options,
        interrupt,
        on_result,
    )?;
    Ok(Verified {
        report,
        base,
        on_base,
    })
}

/// [`plan`] and [`run`] in one call.
pub fn verify(
    ws: &Workspace,
    input: &VerifyInput,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Verified> {
    let plan = plan(ws, input)?;
    run(ws, plan, interrupt, on_result)
}

/// Record the series' current state as its next version (`series version`).
pub fn record_version(
    ws: &Workspace,
    persona: &str,
    name: Option<&str>,
    base: Option<&str>,
) -> Result<ver::Recorded> {
    ver::record(&ws.repo(), persona, name, base)
}

/// Every recorded version of `PERSONA/NAME` (no `@vN`), oldest first (`series versions`).
pub fn versions(ws: &Workspace, series: &str) -> Result<Vec<Version>> {
    let (id, v) = parse_spec(series)?;
    if v.is_some() {
        return Err(Error::usage(
            "`series versions` takes PERSONA/NAME without @vN",
        ));
    }
    ver::versions(&ws.repo(), &id)
}

/// One version with the review notes on its patches (`series show --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    #[serde(flatten)]
    pub version: Version,
    pub reviews: Vec<ver::PatchReviews>,
}

/// Version `PERSONA/NAME[@vN]` (default: the latest) with its reviews.
pub fn show(ws: &Workspace, series: &str) -> Result<Shown> {
    let repo = ws.repo();
    let (id, n) = parse_spec(series)?;
    let version = ver::find(&repo, &id, n)?;
    let reviews = ver::reviews(&repo, &version)?;
    Ok(Shown { version, reviews })
}

/// Two versions of a series to compare: `PERSONA/NAME`, `vN` and `vM` (default: the latest).
#[derive(Debug, Clone, Default)]
pub struct Versions {
    pub series: String,
    pub old: String,
    pub new: Option<String>,
}

/// A comparison of two versions, and the warnings about them: each version that is not its persona's
/// (`PERSONA/NAME@vN: mark`), for a frontend to show beside the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Compared<T> {
    #[serde(flatten)]
    pub diff: T,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

fn two(ws: &Workspace, v: &Versions) -> Result<(gix::Repository, Version, Version)> {
    let repo = ws.repo();
    let (id, at) = parse_spec(&v.series)?;
    if at.is_some() {
        return Err(Error::usage(
            "name the versions as separate arguments: PERSONA/NAME vN vM",
        ));
    }
    let old = ver::find(&repo, &id, Some(parse_version(&v.old)?))?;
    let new = ver::find(&repo, &id, v.new.as_deref().map(parse_version).transpose()?)?;
    Ok((repo, old, new))
}

fn compared<T>(diff: T, old: &Version, new: &Version) -> Compared<T> {
    let warnings = [old, new]
        .into_iter()
        .filter_map(|v| v.mark().map(|m| format!("{}: {m}", ver::label(v))))
        .collect();
    Compared { diff, warnings }
}

/// How to range-diff two versions.
#[derive(Debug, Clone)]
pub struct RangeDiffInput {
    pub versions: Versions,
    /// The percentage of a patch's size pairing it may cost (0 to 10000; git's default 60).
    pub creation_factor: i32,
    /// The diffs of changed pairs, not only the header lines.
    pub with_diff: bool,
    /// Replay the older version onto the newer one's base first.
    pub rebase: bool,
}

/// `series range-diff`: pair the two versions' patches as `git range-diff` does.
pub fn range_diff(ws: &Workspace, input: &RangeDiffInput) -> Result<Compared<ver::RangeDiff>> {
    if !(0..=10_000).contains(&input.creation_factor) {
        return Err(Error::usage(
            "the creation factor is a percentage from 0 to 10000",
        ));
    }
    let (repo, old, new) = two(ws, &input.versions)?;
    let rd = ver::range_diff(
        &repo,
        &old,
        &new,
        input.creation_factor,
        input.with_diff,
        input.rebase,
    )?;
    Ok(compared(rd, &old, &new))
}

/// `series interdiff`: the diff between the two versions' tips.
pub fn interdiff(ws: &Workspace, versions: &Versions) -> Result<Compared<ver::Interdiff>> {
    let (repo, old, new) = two(ws, versions)?;
    let d = ver::interdiff(&repo, &old, &new)?;
    Ok(compared(d, &old, &new))
}

/// `series list --all --json`: every persona's series from their recorded versions, and the refs skipped.
#[derive(Debug, Clone, Serialize)]
pub struct AllVersions {
    pub series: Vec<ver::Listed>,
    pub skipped: Vec<ver::Skipped>,
}

/// Every persona's series, with the cached results of `cmd` (default: `jules.verify.cmd`; blank is none).
pub fn list_versions(ws: &Workspace, cmd: Option<&str>) -> Result<AllVersions> {
    let repo = ws.repo();
    let cmd = super::status::command(&repo, cmd);
    let (series, skipped) = ver::list_all(&repo, cmd.as_deref())?;
    Ok(AllVersions { series, skipped })
}
