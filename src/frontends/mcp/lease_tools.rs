//! The `lease_*` tools of `git jules mcp`: their typed arguments, turned into the inputs of
//! `git_jules::capabilities::lease::api`, whose typed answers are the results (the documents `git jules --json lease …`
//! prints, docs/json.md). Every tool acts as the server's persona only. They are rows of the one dispatch
//! table (`super::tools::all`), which parses the arguments and maps the errors.

use git_jules::capabilities::lease::{api, Changes, Filter};
use schemars::JsonSchema;
use serde::Deserialize;

use super::session::{doc, ok, Answer, Session};

/// `lease_acquire`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Acquire {
    /// Paths or globs relative to the top of the work tree (`src/capabilities/lease/`, `src/**/*.rs`)
    pub paths: Vec<String>,
    /// Shared instead of exclusive (default: exclusive)
    #[serde(default)]
    pub shared: bool,
    /// Time to live: 90s, 30m, 2h, 1d (default: jules.lease.ttl, else 2h)
    pub ttl: Option<String>,
    pub reason: Option<String>,
    pub task: Option<String>,
    /// Decide through the remote: the answer is final when the call returns
    #[serde(default)]
    pub sync: bool,
    pub remote: Option<String>,
}

/// `lease_renew`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Renew {
    /// The lease id or a unique prefix
    pub id: String,
    pub ttl: Option<String>,
}

/// `lease_release`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// Lease ids (or unique prefixes); leave out with `task` or `all`
    #[serde(default)]
    pub ids: Vec<String>,
    /// Release this persona's leases acquired for this task
    pub task: Option<String>,
    /// Release every held lease of this persona
    #[serde(default)]
    pub all: bool,
    /// Release another persona's lease (needs `reason`; the holder is mailed)
    #[serde(default)]
    pub force: bool,
    pub reason: Option<String>,
}

/// `lease_list`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct List {
    pub persona: Option<String>,
    /// Only leases overlapping this path or glob
    pub path: Option<String>,
    /// Also expired, released, denied and superseded leases
    #[serde(default)]
    pub all: bool,
}

/// `lease_check`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Paths or globs to check
    #[serde(default)]
    pub paths: Vec<String>,
    /// Check the paths `git diff RANGE` touches
    pub diff: Option<String>,
    /// Check the staged paths
    #[serde(default)]
    pub staged: bool,
}

pub fn acquire(s: &Session, a: Acquire) -> anyhow::Result<Answer> {
    let r = api::acquire(
        &s.ws,
        &api::AcquireInput {
            persona: s.persona.clone(),
            paths: a.paths,
            shared: a.shared,
            ttl: a.ttl,
            reason: a.reason,
            task: a.task,
            sync: a.sync,
            remote: a.remote,
        },
    )?;
    // Held by someone else: a tool error that carries the holders.
    Ok((r.report.held, doc(&r)?))
}

pub fn renew(s: &Session, a: Renew) -> anyhow::Result<Answer> {
    ok(api::renew(
        &s.ws,
        &api::RenewInput {
            persona: s.persona.clone(),
            id: a.id,
            ttl: a.ttl,
            sync: false,
            remote: None,
        },
    )?)
}

pub fn release(s: &Session, a: Release) -> anyhow::Result<Answer> {
    ok(api::release(
        &s.ws,
        &api::ReleaseInput {
            persona: s.persona.clone(),
            ids: a.ids,
            all: a.all,
            task: a.task,
            force: a.force,
            reason: a.reason,
        },
    )?)
}

pub fn list(s: &Session, a: List) -> anyhow::Result<Answer> {
    ok(api::list(
        &s.ws,
        &Filter {
            persona: a.persona,
            path: a.path,
            all: a.all,
        },
    )?)
}

pub fn check(s: &Session, a: Check) -> anyhow::Result<Answer> {
    let r = api::check(
        &s.ws,
        &api::CheckInput {
            persona: Some(s.persona.clone()),
            paths: a.paths,
            changes: Changes::from_flags(a.diff, a.staged),
        },
    )?;
    // A path under another persona's lease: a tool error that carries the conflicts.
    Ok((r.clean(), doc(&r)?))
}
