//! Workstreams and their exchange (seed 001) as events on the convergent log `refs/jules/exchange`.
//!
//! Seed 001 hands work along `narrator -> observers -> deciders -> [planners] -> implementers` through files
//! under `.jules/workstreams/<ws>/exchange/`. Here each hand-off is an event, so personas in parallel
//! sandboxes never collide and `sync` carries the exchange like mail. Event kinds (data fields):
//!
//! - `exchange.artifact` {workstream, kind, name, yaml, persona?, label?, source_events?, issue?, decided?}:
//!   an artifact validated against its layer's schema. `kind` is `event` (observers), `issue` (deciders;
//!   its `source_events` move those events to `decided`), `plan` (planners expand an issue marked
//!   `requires_deep_analysis: true`), `perspective`, `idea`, `comment`, `proposal` (innovators, per
//!   persona) or `workstation` (a role's perspective).
//! - `exchange.take` {workstream, issue, lock}: an implementer takes an issue; the first `lock` take wins,
//!   else the first take in the total order (like a group claim of mail).
//! - `exchange.close` {workstream, issue, commit}: the winner closes it with the commit implementing it.
//!
//! The view is a pure fold of the ordered events: same events, same view.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::eventlog::{Event, Log, NewEvent};
use crate::{store::refs, store::sync};

pub const LOG: &str = "refs/jules/exchange";
pub const ARTIFACT: &str = "exchange.artifact";
pub const TAKE: &str = "exchange.take";
pub const CLOSE: &str = "exchange.close";

/// The kinds of artifacts, with the layer whose schema validates each.
pub const KINDS: &[(&str, &str, &str)] = &[
    ("event", "observers", "event"),
    ("workstation", "observers", "perspective"),
    ("issue", "deciders", "issue"),
    ("plan", "planners", "plan"),
    ("perspective", "innovators", "perspective"),
    ("idea", "innovators", "idea"),
    ("comment", "innovators", "comment"),
    ("proposal", "innovators", "proposal"),
];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Artifact {
    pub id: String,
    pub workstream: String,
    pub kind: String,
    pub name: String,
    pub actor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub source_events: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
    /// Events: `pending` or `decided`; issues: `open`, `taken` or `closed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_with: Option<String>,
    pub yaml: String,
    #[serde(skip)]
    decided: bool,
    #[serde(skip)]
    lock: bool,
}

/// The fold of the exchange log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    /// In the log's total order.
    pub artifacts: Vec<Artifact>,
}

impl View {
    pub fn of_workstream<'a>(&'a self, ws: &'a str) -> impl Iterator<Item = &'a Artifact> + 'a {
        self.artifacts.iter().filter(move |a| a.workstream == ws)
    }
    fn find(&self, ws: &str, kind: &str, name: &str) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .rev()
            .find(|a| a.workstream == ws && a.kind == kind && a.name == name)
    }
}

/// The data of an `exchange.artifact` event (docs/format.md). Unknown fields are ignored (a newer writer's);
/// an event whose fields do not have these types is not an artifact and is skipped by the fold.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ArtifactData {
    workstream: String,
    kind: String,
    name: String,
    yaml: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    persona: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    /// Issues only (an issue without sources has an empty list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_events: Option<Vec<String>>,
    /// Plans: the issue they expand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issue: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    decided: bool,
}

/// The data of `exchange.take` (with `lock`) and `exchange.close` (with `commit`) events.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IssueData {
    workstream: String,
    issue: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lock: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

fn data<T: serde::de::DeserializeOwned>(d: &serde_json::Value) -> Option<T> {
    T::deserialize(d).ok()
}

fn to_data(v: &impl Serialize) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::wrap("encoding exchange event data", e))
}

pub fn open(repo: &gix::Repository) -> Result<Log<'_>> {
    Log::open(repo, LOG)
}

/// Read and fold the whole log.
pub fn view(log: &Log<'_>) -> Result<View> {
    if log.tips()?.is_empty() {
        return Ok(View::default());
    }
    let (events, _invalid) = log.read_all()?;
    let mut v = View::default();
    let mut idx: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for e in events {
        let d = &e.event.data;
        match e.event.kind.as_str() {
            ARTIFACT => {
                let Some(ad) = data::<ArtifactData>(d) else {
                    continue;
                };
                let a = Artifact {
                    id: e.id.to_hex(),
                    workstream: ad.workstream.clone(),
                    kind: ad.kind.clone(),
                    name: ad.name.clone(),
                    actor: e.event.actor.clone(),
                    persona: ad.persona,
                    label: ad.label,
                    source_events: ad.source_events.unwrap_or_default(),
                    issue: ad.issue,
                    state: None,
                    taken_by: None,
                    closed_with: None,
                    yaml: ad.yaml,
                    decided: ad.decided,
                    lock: false,
                };
                let key = (
                    ad.workstream,
                    ad.kind,
                    a.persona.clone().unwrap_or_default() + "/" + &ad.name,
                );
                // A later artifact of the same kind and name replaces the earlier one (perspectives).
                if let Some(&i) = idx.get(&key) {
                    if a.kind != "comment" {
                        let keep = (
                            v.artifacts[i].taken_by.clone(),
                            v.artifacts[i].closed_with.clone(),
                        );
                        v.artifacts[i] = a;
                        (v.artifacts[i].taken_by, v.artifacts[i].closed_with) = keep;
                        continue;
                    }
                }
                idx.insert(key, v.artifacts.len());
                v.artifacts.push(a);
            }
            TAKE | CLOSE => {
                let Some(id) = data::<IssueData>(d) else {
                    continue;
                };
                let lock = id.lock.unwrap_or(false);
                let Some(a) = v.artifacts.iter_mut().find(|a| {
                    a.workstream == id.workstream && a.kind == "issue" && a.name == id.issue
                }) else {
                    continue;
                };
                if e.event.kind == TAKE {
                    if a.taken_by.is_none() || (lock && !a.lock) {
                        a.taken_by = Some(e.event.actor.clone());
                        a.lock = lock;
                    }
                } else if a.taken_by.as_deref() == Some(e.event.actor.as_str()) {
                    a.closed_with = id.commit;
                }
            }
            _ => {}
        }
    }
    // States: events are decided once an issue of their workstream names them.
    let decided: Vec<(String, String)> = v
        .artifacts
        .iter()
        .filter(|a| a.kind == "issue")
        .flat_map(|a| {
            a.source_events
                .iter()
                .map(|e| (a.workstream.clone(), e.clone()))
        })
        .collect();
    for a in &mut v.artifacts {
        a.state = match a.kind.as_str() {
            "event" => Some(
                if a.decided || decided.contains(&(a.workstream.clone(), a.name.clone())) {
                    "decided"
                } else {
                    "pending"
                }
                .into(),
            ),
            "issue" => Some(
                if a.closed_with.is_some() {
                    "closed"
                } else if a.taken_by.is_some() {
                    "taken"
                } else {
                    "open"
                }
                .into(),
            ),
            _ => None,
        };
    }
    Ok(v)
}

/// Validate `yaml` against `schema` (both YAML mappings): every schema field present, no other field.
/// Returns the artifact as a mapping.
pub fn validate(schema_path: &str, schema: &str, yaml: &str) -> Result<serde_norway::Mapping> {
    let sch: serde_norway::Value = serde_norway::from_str(schema)
        .map_err(|e| Error::usage(format!("schema {schema_path} is not valid YAML: {e}")))?;
    let sch = sch
        .as_mapping()
        .ok_or_else(|| Error::usage(format!("schema {schema_path} is not a mapping of fields")))?;
    let art: serde_norway::Value = serde_norway::from_str(yaml)
        .map_err(|e| Error::usage(format!("the artifact is not valid YAML: {e}")))?;
    let art = art
        .as_mapping()
        .ok_or_else(|| Error::usage("the artifact is not a mapping of fields"))?
        .clone();
    for k in sch.keys() {
        if !art.contains_key(k) {
            return Err(Error::usage(format!(
                "missing field {}: the schema {schema_path} requires it (copy the schema and fill its fields)",
                key_str(k)
            )));
        }
    }
    for k in art.keys() {
        if !sch.contains_key(k) {
            return Err(Error::usage(format!(
                "unknown field {}: the schema {schema_path} has no such field (never invent structure)",
                key_str(k)
            )));
        }
    }
    Ok(art)
}

fn key_str(k: &serde_norway::Value) -> String {
    k.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("{k:?}"))
}

/// What to add.
#[derive(Debug, Clone, Default)]
pub struct AddRequest {
    pub workstream: String,
    pub kind: String,
    pub yaml: String,
    /// Innovators' persona, or the workstation's role.
    pub persona: Option<String>,
    /// Issues: the label (default: the artifact's `label` field).
    pub label: Option<String>,
    /// Plans: the issue they expand.
    pub issue: Option<String>,
    /// Name (default: the artifact's `id` field, else the kind for per-persona artifacts).
    pub name: Option<String>,
    /// Set by import: the event was decided in the directory it came from.
    pub decided: bool,
    /// Set by import: a deterministic event (no nonce, fixed time), so a second import adds nothing.
    pub deterministic: bool,
}

/// Validate and append an artifact. Nothing is written when anything is wrong.
pub fn add(log: &Log<'_>, workdir: &Path, actor: &str, req: AddRequest) -> Result<Artifact> {
    crate::capabilities::prompt::require_workstream(workdir, &req.workstream)?;
    let Some(&(_, layer, schema)) = KINDS.iter().find(|k| k.0 == req.kind) else {
        return Err(Error::usage(format!(
            "unknown artifact kind {:?}: use {}",
            req.kind,
            KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
        )));
    };
    let schema_rel = format!(".jules/roles/{layer}/schemas/{schema}.yml");
    let fields = match std::fs::read_to_string(workdir.join(&schema_rel)) {
        Ok(text) => validate(&schema_rel, &text, &req.yaml)?,
        Err(_) if req.kind == "plan" => serde_norway::from_str::<serde_norway::Value>(&req.yaml)
            .ok()
            .and_then(|v| v.as_mapping().cloned())
            .unwrap_or_default(),
        Err(_) => {
            return Err(Error::NotFound {
                what: crate::kit::error::Thing::Schema,
                name: schema_rel,
            })
        }
    };
    let field = |k: &str| fields.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let needs_persona = matches!(
        req.kind.as_str(),
        "perspective" | "idea" | "comment" | "proposal" | "workstation"
    );
    if needs_persona && req.persona.is_none() {
        return Err(Error::needs(
            ErrorKind::Usage,
            format!("a {} belongs to a persona (or role)", req.kind),
            Remedy::Persona,
        ));
    }
    if let Some(p) = &req.persona {
        crate::capabilities::mail::message::validate_persona(p)?;
    }
    let current = view(log)?;
    let name = req
        .name
        .clone()
        .or_else(|| field("id").filter(|s| !s.is_empty()))
        .or_else(|| (needs_persona && req.kind != "comment").then(|| req.kind.clone()))
        .ok_or_else(|| Error::usage(format!("a {} needs a non-empty id field", req.kind)))?;
    let mut data = ArtifactData {
        workstream: req.workstream.clone(),
        kind: req.kind.clone(),
        name: name.clone(),
        yaml: req.yaml.clone(),
        persona: req.persona.clone(),
        label: None,
        source_events: None,
        issue: None,
        decided: req.decided,
    };
    match req.kind.as_str() {
        "issue" => {
            let label = req
                .label
                .clone()
                .or_else(|| field("label"))
                .filter(|l| !l.is_empty())
                .ok_or_else(|| {
                    Error::needs(ErrorKind::Usage, "an issue needs a label", Remedy::Label)
                })?;
            let sources: Vec<String> = fields
                .get("source_events")
                .and_then(|v| v.as_sequence())
                .map(|s| {
                    s.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            for e in &sources {
                if current.find(&req.workstream, "event", e).is_none() {
                    return Err(Error::NotFound {
                        what: crate::kit::error::Thing::SourceEvent,
                        name: format!("{e} (in workstream {})", req.workstream),
                    });
                }
            }
            data.label = Some(label);
            data.source_events = Some(sources);
        }
        "plan" => {
            let issue = req.issue.clone().ok_or_else(|| {
                Error::needs(
                    ErrorKind::Usage,
                    "a plan expands an issue: name it",
                    Remedy::Issue,
                )
            })?;
            let Some(i) = current.find(&req.workstream, "issue", &issue) else {
                return Err(Error::NotFound {
                    what: crate::kit::error::Thing::Issue,
                    name: issue,
                });
            };
            let deep: Option<serde_norway::Value> = serde_norway::from_str(&i.yaml).ok();
            let deep = deep
                .as_ref()
                .and_then(|v| v.get("requires_deep_analysis"))
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            if !deep {
                return Err(Error::usage(format!(
                    "issue {issue} is not marked requires_deep_analysis: true; planners expand only those"
                )));
            }
            data.issue = Some(issue);
        }
        _ => {}
    }
    let mut ev = Event::new(ARTIFACT, actor, to_data(&data)?);
    if req.deterministic {
        ev.nonce = None;
        ev.time = "1970-01-01T00:00:00.000Z".into();
        let id = ev.id()?.to_hex();
        if current.artifacts.iter().any(|a| a.id == id) {
            return current
                .artifacts
                .into_iter()
                .find(|a| a.id == id)
                .ok_or_else(|| Error::Other("vanished".into()));
        }
    }
    let appended = log.append(NewEvent::new(ev))?;
    let id = appended.id.to_hex();
    view(log)?
        .artifacts
        .into_iter()
        .find(|a| {
            a.id == id || (a.workstream == req.workstream && a.kind == req.kind && a.name == name)
        })
        .ok_or_else(|| {
            Error::Other("the artifact was written but the view does not show it".into())
        })
}

/// The outcome of a take.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TakeReport {
    pub issue: String,
    pub persona: String,
    pub won: bool,
    pub winner: String,
    pub remote: Option<String>,
}

fn take_event(ws: &str, issue: &str, persona: &str, lock: bool) -> Result<NewEvent> {
    Ok(NewEvent::new(Event::new(
        TAKE,
        persona,
        to_data(&IssueData {
            workstream: ws.to_owned(),
            issue: issue.to_owned(),
            lock: Some(lock),
            commit: None,
        })?,
    )))
}

fn taker(log: &Log<'_>, ws: &str, issue: &str) -> Result<(Option<String>, bool)> {
    let v = view(log)?;
    let a = v.find(ws, "issue", issue).ok_or_else(|| Error::NotFound {
        what: crate::kit::error::Thing::Issue,
        name: format!("{issue} (in workstream {ws})"),
    })?;
    Ok((a.taken_by.clone(), a.lock))
}

/// Take an issue. With `remote`, the take goes through the remote as a lock (see `mail::claim`): the
/// remote accepts a lock take only on a tip holding no other winner, so one winner exists across clones.
pub fn take(
    log: &Log<'_>,
    ws: &str,
    issue: &str,
    persona: &str,
    remote: Option<&str>,
) -> Result<TakeReport> {
    crate::capabilities::mail::message::validate_persona(persona)?;
    let report = |winner: String| TakeReport {
        issue: issue.into(),
        persona: persona.into(),
        won: winner == persona,
        winner,
        remote: remote.map(str::to_string),
    };
    let Some(remote) = remote else {
        if let (Some(w), _) = taker(log, ws, issue)? {
            return Ok(report(w));
        }
        log.append(take_event(ws, issue, persona, false)?)?;
        let (w, _) = taker(log, ws, issue)?;
        return Ok(report(w.unwrap_or_default()));
    };
    let repo = log.repo();
    for round in 1..=12u32 {
        sync::sync(repo, remote)?;
        match taker(log, ws, issue)? {
            (Some(w), lock) if w != persona || lock => return Ok(report(w)),
            _ => {}
        }
        let tracking = sync::tracking_name(remote, log.name());
        let remote_tip = refs::target(repo, &tracking)?;
        let parent = match remote_tip {
            Some(t) => Some(t),
            None => log.local_tip()?,
        };
        let commit =
            log.write_detached(parent, vec![take_event(ws, issue, persona, true)?])?[0].commit;
        if sync::push_leased(repo, remote, log.name(), commit, remote_tip)? {
            crate::capabilities::mail::claim::bring_local_along(
                log,
                commit,
                "jules: exchange take",
            )?;
            continue;
        }
        std::thread::sleep(std::time::Duration::from_millis(
            15 * u64::from(round) + u64::from(std::process::id() % 17),
        ));
    }
    Err(Error::Race {
        message: format!("take of {issue} through {remote} did not settle: others keep pushing"),
    })
}

/// Close an issue the persona holds, with the commit (or branch) implementing it.
pub fn close(log: &Log<'_>, ws: &str, issue: &str, persona: &str, commit: &str) -> Result<()> {
    match taker(log, ws, issue)? {
        (Some(w), _) if w == persona => {}
        (Some(w), _) => {
            return Err(Error::Conflict(format!(
                "issue {issue} is taken by {w}, not {persona}"
            )))
        }
        (None, _) => {
            return Err(Error::usage(format!(
                "issue {issue} is not taken: take it first"
            )))
        }
    }
    log.append(NewEvent::new(Event::new(
        CLOSE,
        persona,
        to_data(&IssueData {
            workstream: ws.to_owned(),
            issue: issue.to_owned(),
            lock: None,
            commit: Some(commit.to_owned()),
        })?,
    )))?;
    Ok(())
}

/// The seed-001 path (relative to the export directory) of an artifact, `None` when it is not exported
/// (plans and closed issues).
pub fn export_path(a: &Artifact) -> Option<String> {
    let base = format!("{}/exchange", a.workstream);
    let who = a.persona.clone().unwrap_or_default();
    Some(match a.kind.as_str() {
        "event" => format!("{base}/events/{}/{}.yml", a.state.as_deref()?, a.name),
        "issue" if a.state.as_deref() != Some("closed") => {
            format!("{base}/issues/{}/{}.yml", a.label.as_deref()?, a.name)
        }
        "perspective" | "idea" | "proposal" => format!("{base}/innovators/{who}/{}.yml", a.kind),
        "comment" => format!("{base}/innovators/{who}/comments/{}.yml", a.name),
        "workstation" => format!("{}/workstations/{who}/perspective.yml", a.workstream),
        _ => return None,
    })
}

/// Write the seed-001 layout under `dir` (its `workstreams/` level): same log, same bytes.
pub fn export(log: &Log<'_>, dir: &Path) -> Result<Vec<String>> {
    let v = view(log)?;
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for a in &v.artifacts {
        if let Some(p) = export_path(a) {
            files.insert(p, a.yaml.clone());
        }
    }
    for (p, text) in &files {
        let path = dir.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    }
    Ok(files.into_keys().collect())
}

/// Read a seed-001 layout from `dir` (its `workstreams/` level). Idempotent: importing the same files again
/// adds nothing. Returns how many artifacts were added.
pub fn import(log: &Log<'_>, workdir: &Path, actor: &str, dir: &Path) -> Result<usize> {
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    // Events first, so issues find their source events.
    files.sort_by_key(|(rel, _)| !rel.contains("/exchange/events/"));
    let before = view(log)?.artifacts.len();
    for (rel, text) in files {
        let parts: Vec<&str> = rel.split('/').collect();
        let stem = |f: &str| f.strip_suffix(".yml").map(str::to_string);
        let mut req = AddRequest {
            workstream: parts[0].to_string(),
            yaml: text,
            deterministic: true,
            ..Default::default()
        };
        match parts[1..] {
            ["exchange", "events", st, f] => {
                req.kind = "event".into();
                req.name = stem(f);
                req.decided = st == "decided";
            }
            ["exchange", "issues", label, f] => {
                req.kind = "issue".into();
                req.label = Some(label.into());
                req.name = stem(f);
            }
            ["exchange", "innovators", p, "comments", f] => {
                req.kind = "comment".into();
                req.persona = Some(p.into());
                req.name = stem(f);
            }
            ["exchange", "innovators", p, f] => {
                req.kind = stem(f).unwrap_or_default();
                req.persona = Some(p.into());
            }
            ["workstations", role, "perspective.yml"] => {
                req.kind = "workstation".into();
                req.persona = Some(role.into());
            }
            _ => continue,
        }
        if req.name.is_none() && req.kind != "event" && req.kind != "issue" {
            req.name = Some(req.kind.clone());
        }
        if req.name.is_none() {
            continue;
        }
        add(log, workdir, actor, req)?;
    }
    Ok(view(log)?.artifacts.len() - before)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> Result<()> {
    let rd =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out)?;
        } else if p.extension().is_some_and(|x| x == "yml") {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p)
                .map_err(|e| Error::io(format!("reading {}", p.display()), e))?;
            out.push((rel, text));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    const SCHEMA: &str = "id: \"\"\ntitle: \"\"\nevidence: []\n";

    #[test]
    fn a_valid_artifact_passes_and_field_errors_name_the_field() {
        let m = validate("s.yml", SCHEMA, "id: a\ntitle: t\nevidence: [x]\n").unwrap();
        assert_eq!(m.len(), 3);
        let e = validate("s.yml", SCHEMA, "id: a\nevidence: []\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("missing field title"), "{e}");
        let e = validate("s.yml", SCHEMA, "id: a\ntitle: t\nevidence: []\nextra: 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("unknown field extra"), "{e}");
        assert!(validate("s.yml", SCHEMA, "- a list\n").is_err());
        assert!(validate("s.yml", SCHEMA, "id: [unclosed\n").is_err());
    }
}
