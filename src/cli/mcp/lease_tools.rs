//! The `lease_*` tools of `git jules mcp`: typed arguments deserialised and handed to `git_jules::lease`
//! directly, the typed result serialised. Unlike [`super::tools`] no command line is built or parsed again:
//! the library is the use case, this module only adapts it to the protocol. The result documents are the
//! ones `git jules --json lease …` prints (docs/json.md). Every tool acts as the server's persona only.

use super::tools::Session;
use std::sync::Arc;

use git_jules::lease::{self, ops, Changes, Filter};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// `lease_acquire`
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Acquire {
    /// Paths or globs relative to the top of the work tree (`src/lease/`, `src/**/*.rs`)
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

pub const NAMES: &[&str] = &[
    "lease_acquire",
    "lease_renew",
    "lease_release",
    "lease_list",
    "lease_check",
];

fn schema<T: JsonSchema>() -> Arc<JsonObject> {
    match serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default() {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

pub fn tools() -> Vec<Tool> {
    let t = |name: &'static str, desc: &'static str, schema: Arc<JsonObject>, read_only: bool| {
        Tool::new(name, desc, schema).annotate(
            rmcp::model::ToolAnnotations::new()
                .read_only(read_only)
                .destructive(false),
        )
    };
    vec![
        t("lease_acquire", "Lease paths or globs as this persona before changing them. held=false names the holders (paths, reason, expiry). With sync the answer is final.", schema::<Acquire>(), false),
        t("lease_renew", "Extend a live lease of this persona to now + ttl.", schema::<Renew>(), false),
        t("lease_release", "Release this persona's leases (by id, task or all); another persona's only with force and a reason (they are mailed).", schema::<Release>(), false),
        t("lease_list", "List live leases (all: also expired, released, denied), with time left.", schema::<List>(), true),
        t("lease_check", "Check paths, a diff range or the staged paths against other personas' exclusive leases.", schema::<Check>(), true),
    ]
}

fn versioned(v: impl serde::Serialize) -> anyhow::Result<Value> {
    let mut v = serde_json::to_value(v)?;
    if let Value::Object(m) = &mut v {
        m.insert("version".into(), 1.into());
    }
    Ok(v)
}

/// Run tool `name` as the session's persona, on the session's repository (with its pinned key).
pub fn call(session: &Session, name: &str, arguments: Value) -> CallToolResult {
    let arguments = if arguments.is_null() {
        json!({})
    } else {
        arguments
    };
    match run(session, name, arguments) {
        Ok((true, v)) => CallToolResult::structured(v),
        Ok((false, v)) => CallToolResult::structured_error(v),
        Err(e) => super::failure(&e),
    }
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, v: Value) -> anyhow::Result<T> {
    serde_json::from_value(v)
        .map_err(|e| git_jules::Error::usage(format!("{name}: bad arguments: {e}")).into())
}

fn run(session: &Session, name: &str, arguments: Value) -> anyhow::Result<(bool, Value)> {
    let persona = session.persona.as_str();
    let repo = session.ws.repo();
    let log = lease::open(&repo)?;
    let now = lease::now(&repo);
    let settings = lease::Settings::from_config(&repo)?;
    let ttl = |t: Option<String>| settings.ttl(t.as_deref());
    match name {
        "lease_acquire" => {
            let a: Acquire = parse(name, arguments)?;
            let remote = lease::sync_remote(&repo, a.sync, a.remote)?;
            let req = ops::AcquireRequest {
                persona: persona.to_owned(),
                paths: a.paths,
                exclusive: !a.shared,
                ttl: ttl(a.ttl)?,
                reason: a.reason,
                task: a.task,
            };
            let r = ops::acquire(&log, now, &req, remote.as_deref())?;
            Ok((r.held, versioned(&r)?))
        }
        "lease_renew" => {
            let a: Renew = parse(name, arguments)?;
            let l = ops::renew(&log, now, persona, &a.id, ttl(a.ttl)?, None)?;
            Ok((true, versioned(&l)?))
        }
        "lease_release" => {
            let a: Release = parse(name, arguments)?;
            let released = if a.all || a.task.is_some() {
                ops::release_all(&log, now, persona, a.task.as_deref(), a.reason.as_deref())?
            } else if a.ids.is_empty() {
                return Err(
                    git_jules::Error::usage("lease_release: name ids, a task or all").into(),
                );
            } else {
                a.ids
                    .iter()
                    .map(|id| ops::release(&log, now, persona, id, a.force, a.reason.as_deref()))
                    .collect::<Result<Vec<_>, _>>()?
            };
            Ok((true, versioned(json!({ "released": released }))?))
        }
        "lease_list" => {
            let a: List = parse(name, arguments)?;
            let v = lease::view(&log)?;
            let mut items = lease::list(
                &v,
                now,
                &Filter {
                    persona: a.persona,
                    path: a.path,
                    all: a.all,
                },
            )?;
            lease::sign_listed(&log, &mut items)?;
            Ok((
                true,
                versioned(json!({ "now": lease::format_time(now), "leases": items }))?,
            ))
        }
        "lease_check" => {
            let a: Check = parse(name, arguments)?;
            let changes = Changes::from_flags(a.diff, a.staged);
            let r = lease::held::check_request(
                &log,
                now,
                Some(persona),
                &a.paths,
                changes.as_ref(),
                settings.ignore_case,
            )?;
            Ok((r.conflicts.is_empty(), versioned(&r)?))
        }
        _ => Err(git_jules::Error::usage(format!("no tool named {name}")).into()),
    }
}
