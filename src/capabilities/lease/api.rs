//! The lease use cases as typed calls on a [`Workspace`]: acquire, renew, release, list, check and remind,
//! what `git jules lease …`, the MCP server's `lease_*` tools and any other frontend do.
//!
//! Each call reads the settings, the clock and the log itself, so a frontend only turns its arguments into
//! the input and presents the answer. The answers serialise as the `--json` documents of docs/json.md; the
//! moment they were made at (`now`, what "time left" is measured from) rides along unserialised where the
//! document does not name it, so a frontend that shows time left shows it from the same moment.

use serde::{Serialize, Serializer};

use super::ops::{self, AcquireReport};
use super::{Changes, Filter, Lease, Listed, PreCommit, Settings};
use crate::capabilities::workspace::Workspace;
use crate::{Error, Result};

/// What to acquire, and as whom.
#[derive(Debug, Clone, Default)]
pub struct AcquireInput {
    pub persona: String,
    /// Paths or globs relative to the top of the work tree.
    pub paths: Vec<String>,
    /// Others may hold shared leases on the same paths (default: exclusive).
    pub shared: bool,
    /// A duration (`2h`); default `jules.lease.ttl`, at most `jules.lease.maxTtl`.
    pub ttl: Option<String>,
    pub reason: Option<String>,
    pub task: Option<String>,
    /// Decide through the remote: the answer is final.
    pub sync: bool,
    /// The remote for `sync` (default: the coordination remote).
    pub remote: Option<String>,
}

/// `lease acquire --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Acquired {
    #[serde(flatten)]
    pub report: AcquireReport,
    /// The moment of the acquire (Unix seconds).
    #[serde(skip)]
    pub now: i64,
}

/// Acquire a lease (see [`ops::acquire`]).
pub fn acquire(ws: &Workspace, input: &AcquireInput) -> Result<Acquired> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let req = ops::AcquireRequest {
        persona: input.persona.clone(),
        paths: input.paths.clone(),
        exclusive: !input.shared,
        ttl: settings.ttl(input.ttl.as_deref())?,
        reason: input.reason.clone(),
        task: input.task.clone(),
    };
    let remote = super::sync_remote(&repo, input.sync, input.remote.clone())?;
    let report = ops::acquire(&log, now, &req, remote.as_deref())?;
    Ok(Acquired { report, now })
}

/// Which lease to renew, by whom, for how long.
#[derive(Debug, Clone, Default)]
pub struct RenewInput {
    pub persona: String,
    /// The lease id or a unique prefix.
    pub id: String,
    pub ttl: Option<String>,
    /// Sync with the remote before and after, so others see the new expiry.
    pub sync: bool,
    pub remote: Option<String>,
}

/// `lease renew --json`: the lease as renewed.
#[derive(Debug, Clone, Serialize)]
pub struct Renewed {
    #[serde(flatten)]
    pub lease: Lease,
    #[serde(skip)]
    pub now: i64,
}

/// Renew a live lease of the persona (see [`ops::renew`]).
pub fn renew(ws: &Workspace, input: &RenewInput) -> Result<Renewed> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let remote = super::sync_remote(&repo, input.sync, input.remote.clone())?;
    let ttl = settings.ttl(input.ttl.as_deref())?;
    let lease = ops::renew(&log, now, &input.persona, &input.id, ttl, remote.as_deref())?;
    Ok(Renewed { lease, now })
}

/// Which leases to release: `ids`, or every held lease of the persona (`all`), or those for `task`.
#[derive(Debug, Clone, Default)]
pub struct ReleaseInput {
    pub persona: String,
    pub ids: Vec<String>,
    pub all: bool,
    pub task: Option<String>,
    /// Release another persona's lease (needs `reason`; the holder is mailed).
    pub force: bool,
    pub reason: Option<String>,
}

/// `lease release --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Released {
    pub released: Vec<Lease>,
    #[serde(skip)]
    pub now: i64,
}

/// Release leases (see [`ops::release`], [`ops::release_all`]). Naming none is bad input.
pub fn release(ws: &Workspace, input: &ReleaseInput) -> Result<Released> {
    let repo = ws.repo();
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let persona = input.persona.as_str();
    let reason = input.reason.as_deref();
    let released = if input.all || input.task.is_some() {
        ops::release_all(&log, now, persona, input.task.as_deref(), reason)?
    } else if input.ids.is_empty() {
        return Err(Error::usage(
            "name the leases to release: their ids, a task, or all",
        ));
    } else {
        input
            .ids
            .iter()
            .map(|id| ops::release(&log, now, persona, id, input.force, reason))
            .collect::<Result<_>>()?
    };
    Ok(Released { released, now })
}

/// `lease list --json`: the leases at a moment. (Fields in the order of the sorted map this document
/// was before it was a struct: the bytes `--json` prints are kept.)
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    pub leases: Vec<Listed>,
    /// The moment the list is made at; `live` and `expires_in` are measured from it.
    #[serde(serialize_with = "rfc3339")]
    pub now: i64,
}

fn rfc3339<S: Serializer>(t: &i64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&super::format_time(*t))
}

/// The leases `filter` selects (live ones unless `filter.all`), with their signatures' states.
pub fn list(ws: &Workspace, filter: &Filter) -> Result<Listing> {
    let repo = ws.repo();
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let v = super::view(&log)?;
    let mut leases = super::list(&v, now, filter)?;
    super::sign_listed(&log, &mut leases)?;
    Ok(Listing { leases, now })
}

/// What to check, for whom.
#[derive(Debug, Clone, Default)]
pub struct CheckInput {
    /// Whose leases do not count (none: every exclusive lease counts).
    pub persona: Option<String>,
    /// Paths or globs; or leave empty and name `changes`.
    pub paths: Vec<String>,
    pub changes: Option<Changes>,
}

/// `lease check --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    #[serde(flatten)]
    pub report: super::held::CheckReport,
    #[serde(skip)]
    pub now: i64,
}

impl Checked {
    /// No path is under another persona's exclusive lease.
    pub fn clean(&self) -> bool {
        self.report.conflicts.is_empty()
    }
}

/// Check paths, a diff range or the staged change against others' exclusive leases (see
/// [`super::held::check_request`]).
pub fn check(ws: &Workspace, input: &CheckInput) -> Result<Checked> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let report = super::held::check_request(
        &log,
        now,
        input.persona.as_deref(),
        &input.paths,
        input.changes.as_ref(),
        settings.ignore_case,
    )?;
    Ok(Checked { report, now })
}

/// What the pre-commit hook does with a conflict (`jules.lease.preCommit`).
pub fn pre_commit(ws: &Workspace) -> Result<PreCommit> {
    Ok(Settings::from_config(&ws.repo())?.pre_commit)
}

/// Who reminds, how long ahead.
#[derive(Debug, Clone, Default)]
pub struct RemindInput {
    /// The sender of the reminders.
    pub from: String,
    /// A duration (default: `jules.lease.remindBefore`).
    pub lead: Option<String>,
}

/// `lease remind --json`.
#[derive(Debug, Clone, Serialize)]
pub struct Reminded {
    pub reminded: Vec<Lease>,
    #[serde(skip)]
    pub now: i64,
}

/// Mail the holders whose leases expire within the lead time (see [`ops::remind`]).
pub fn remind(ws: &Workspace, input: &RemindInput) -> Result<Reminded> {
    let repo = ws.repo();
    let settings = Settings::from_config(&repo)?;
    let lead = match &input.lead {
        Some(l) => super::parse_ttl(l)?,
        None => settings.remind_before,
    };
    let log = super::open(&repo)?;
    let now = super::now(&repo);
    let reminded = ops::remind(&log, now, lead, &input.from)?;
    Ok(Reminded { reminded, now })
}
