//! Importing seed 000's `events.jsonl` log (see [`super::import`] for what every import shares).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::import::{
    append_new, derive_subject, existing, imported_event, stored_time, ImportReport,
};
use super::kinds::{self, MarkData, SendData, Source};
use super::message::{self, Priority};
use super::ops::to_value;
use super::recipients::Groups;
use crate::kit::error::{Error, Result};
use crate::kit::names;
use crate::store::eventlog::{EventId, Log, NewEvent};

#[derive(Debug, Deserialize)]
struct Record {
    #[serde(default)]
    event_id: Option<serde_json::Value>,
    #[serde(default)]
    ts: Option<String>,
    event_type: String,
    #[serde(default)]
    message_id: Option<serde_json::Value>,
    #[serde(default)]
    actor: Option<String>,
    #[serde(default)]
    from_persona: Option<String>,
    #[serde(default)]
    to_persona: Option<serde_json::Value>,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    attachments: Option<Vec<String>>,
    #[serde(default)]
    read_at: Option<String>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default, rename = "type")]
    msg_type: Option<String>,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    needs_response: Option<bool>,
}

fn opt_string(v: &Option<serde_json::Value>) -> Option<String> {
    match v {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    }
}

/// The seed's type when it gave one, else `conflict` for the integrator's conflict reports, else `status`.
fn jsonl_type(r: &Record) -> Result<String> {
    match &r.msg_type {
        Some(t) => {
            names::validate_name("message type", t)?;
            Ok(t.clone())
        }
        None if r
            .subject
            .as_deref()
            .is_some_and(|s| s.trim_start().to_ascii_lowercase().starts_with("conflict")) =>
        {
            Ok("conflict".into())
        }
        None => Ok("status".into()),
    }
}

/// Import a seed-000 `events.jsonl`.
pub fn import_jsonl(log: &Log<'_>, groups: &Groups, text: &str) -> Result<ImportReport> {
    let ex = existing(log, None)?;
    let mut report = ImportReport {
        format: "jsonl".into(),
        ..ImportReport::default()
    };
    let mut messages: HashMap<i64, EventId> = ex.jsonl_messages.clone();
    let mut events = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        report.records += 1;
        let at = |e: Error| Error::usage(format!("line {lineno}: {e:#}"));
        let r: Record = serde_json::from_str(line)
            .map_err(|e| Error::usage(format!("line {lineno}: not a seed-000 event: {e}")))?;
        let message_id = match &r.message_id {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                    .ok_or_else(|| {
                        Error::usage(format!("line {lineno}: message_id {v} is not an integer"))
                    })?,
            ),
        };
        let source = Source {
            format: "jsonl".into(),
            event_id: opt_string(&r.event_id),
            message_id,
        };
        let ts =
            r.ts.as_deref()
                .ok_or_else(|| Error::usage(format!("line {lineno}: no ts")))?;
        let time = stored_time(ts, &format!("line {lineno}"))?;
        match r.event_type.as_str() {
            "send" => {
                let from = r.from_persona.clone().or(r.actor.clone()).ok_or_else(|| {
                    Error::usage(format!("line {lineno}: send without from_persona"))
                })?;
                message::validate_persona(&from).map_err(at)?;
                let to = match &r.to_persona {
                    Some(serde_json::Value::String(s)) => vec![s.clone()],
                    Some(serde_json::Value::Array(a)) => a
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            Error::usage(format!("line {lineno}: to_persona must hold names"))
                        })?,
                    _ => {
                        return Err(Error::usage(format!(
                            "line {lineno}: send without to_persona"
                        )))
                    }
                };
                let resolved = groups.resolve(&to).map_err(at)?;
                let body = r.body.clone().unwrap_or_default();
                message::validate_body(&body).map_err(at)?;
                let subject = match r.subject.as_deref().map(str::trim) {
                    Some(s) if !s.is_empty() => s.to_owned(),
                    _ => derive_subject(&body),
                };
                message::validate_subject(&subject).map_err(at)?;
                let priority = match &r.priority {
                    Some(p) => Priority::parse(p).map_err(at)?,
                    None => Priority::Normal,
                };
                let tags = r.tags.clone().unwrap_or_default();
                for t in &tags {
                    names::validate_name("tag", t).map_err(at)?;
                }
                let urls = r.attachments.clone().unwrap_or_default();
                for u in &urls {
                    message::validate_url(u).map_err(at)?;
                }
                let data = SendData {
                    to: resolved.to,
                    groups: resolved.groups,
                    subject,
                    body,
                    msg_type: jsonl_type(&r).map_err(at)?,
                    priority,
                    tags,
                    needs_response: r.needs_response.unwrap_or(false),
                    in_reply_to: None,
                    thread: None,
                    expires: None,
                    urls,
                    headers: BTreeMap::new(),
                    source: Some(source),
                };
                let ev = imported_event(kinds::SEND, &from, &time, to_value(&data)?);
                let id = ev.id().map_err(at)?;
                if let Some(m) = message_id {
                    messages.entry(m).or_insert(id);
                }
                report.messages += 1;
                events.push(NewEvent::new(ev));
            }
            other => {
                let kind = match other {
                    "read" => kinds::READ,
                    "unread" => kinds::UNREAD,
                    "tag_add" | "tag" => kinds::TAG,
                    "tag_rm" | "untag" => kinds::UNTAG,
                    "trash" => kinds::TRASH,
                    "untrash" => kinds::UNTRASH,
                    "archive" => kinds::ARCHIVE,
                    "unarchive" => kinds::UNARCHIVE,
                    _ => {
                        report
                            .skipped
                            .push(format!("line {lineno}: unknown event_type {other:?}"));
                        continue;
                    }
                };
                let Some(actor) = r.actor.clone() else {
                    return Err(Error::usage(format!(
                        "line {lineno}: {other} without actor"
                    )));
                };
                message::validate_persona(&actor).map_err(at)?;
                let Some(target) = message_id.and_then(|m| messages.get(&m)) else {
                    report.skipped.push(format!(
                        "line {lineno}: {other} of message {} that the log does not hold",
                        message_id.map(|m| m.to_string()).unwrap_or("(none)".into())
                    ));
                    continue;
                };
                let tag = if matches!(kind, kinds::TAG | kinds::UNTAG) {
                    let t = r.tag.clone().ok_or_else(|| {
                        Error::usage(format!("line {lineno}: {other} without tag"))
                    })?;
                    names::validate_name("tag", &t).map_err(at)?;
                    Some(t)
                } else {
                    None
                };
                let time = match (&r.read_at, kind) {
                    (Some(t), kinds::READ) => stored_time(t, &format!("line {lineno}"))?,
                    _ => time,
                };
                let data = MarkData {
                    message: target.to_hex(),
                    tag,
                    source: Some(source),
                };
                events.push(NewEvent::new(imported_event(
                    kind,
                    &actor,
                    &time,
                    to_value(&data)?,
                )));
            }
        }
    }
    append_new(log, &ex, events, &mut report)?;
    Ok(report)
}
