//! Importing the seed formats: the seed-000 `events.jsonl` log and the seed-003 `.mail/` maildir.
//!
//! Imported events are deterministic: no nonce, the time from the source, ids of referenced messages
//! computed from their content. Importing the same source twice therefore yields the same events, and
//! events the log already holds (or that occur twice in the source) are not appended again.
//! Nothing is written unless the whole source reads cleanly; records that cannot be applied (a mark on a
//! message the log does not have, an unknown event type) are skipped and reported.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::frontmatter::{self, Document, Value};
use super::kinds::{self, MarkData, SendData, Source};
use super::message::{self, Priority, BROADCAST};
use super::ops::to_value;
use super::recipients::Groups;
use super::when;
use crate::error::{Error, Result};
use crate::eventlog::{Event, EventId, Log, NewEvent, FORMAT_VERSION};
use crate::names;

/// What an import did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// `jsonl` or `maildir`.
    pub format: String,
    /// Records (JSONL lines, maildir files) read.
    pub records: usize,
    /// Messages in the source.
    pub messages: usize,
    /// Events appended.
    pub appended: usize,
    /// Events the log already held (or that the source holds twice).
    pub duplicates: usize,
    /// Records skipped, with the reason.
    pub skipped: Vec<String>,
}

/// What the log already holds, for deduplication and for resolving references.
struct Existing {
    ids: HashSet<EventId>,
    /// seed-000 message number to message id, from earlier JSONL imports.
    jsonl_messages: HashMap<i64, EventId>,
    /// maildir file base name (`{timestamp}_{from}_{type}`) to message id.
    file_names: HashMap<String, EventId>,
}

fn existing(log: &Log<'_>) -> Result<Existing> {
    let (events, _) = log.read_all()?;
    let mut ex = Existing {
        ids: HashSet::with_capacity(events.len()),
        jsonl_messages: HashMap::new(),
        file_names: HashMap::new(),
    };
    for e in &events {
        ex.ids.insert(e.id);
        if e.event.kind != kinds::SEND {
            continue;
        }
        let Ok(d) = SendData::deserialize(&e.event.data) else {
            continue;
        };
        if let Some(n) = d
            .source
            .as_ref()
            .filter(|s| s.format == "jsonl")
            .and_then(|s| s.message_id)
        {
            ex.jsonl_messages.entry(n).or_insert(e.id);
        }
        ex.file_names
            .entry(super::export::base_name(e, &d))
            .or_insert(e.id);
    }
    Ok(ex)
}

/// Append what is new; fill the counts.
fn append_new(
    log: &Log<'_>,
    ex: &Existing,
    events: Vec<NewEvent>,
    report: &mut ImportReport,
) -> Result<()> {
    let mut seen = HashSet::new();
    let mut fresh = Vec::new();
    for ev in events {
        let id = event_id_with_files(log, &ev)?;
        if ex.ids.contains(&id) || !seen.insert(id) {
            report.duplicates += 1;
        } else {
            fresh.push(ev);
        }
    }
    report.appended = fresh.len();
    for chunk in chunks(fresh, 20_000) {
        super::ops::append(log, chunk)?;
    }
    Ok(())
}

fn chunks(mut v: Vec<NewEvent>, size: usize) -> Vec<Vec<NewEvent>> {
    let mut out = Vec::new();
    while v.len() > size {
        let rest = v.split_off(size);
        out.push(v);
        v = rest;
    }
    if !v.is_empty() {
        out.push(v);
    }
    out
}

/// The id an event will have once its files are stored (their blob ids are part of the event).
fn event_id_with_files(log: &Log<'_>, ev: &NewEvent) -> Result<EventId> {
    if ev.files.is_empty() {
        return ev.event.id();
    }
    let mut e = ev.event.clone();
    let mut refs: Vec<crate::eventlog::PayloadRef> = ev
        .files
        .iter()
        .map(|(name, bytes)| crate::eventlog::PayloadRef {
            name: name.clone(),
            blob: gix::objs::compute_hash(log.repo().object_hash(), gix::objs::Kind::Blob, bytes)
                .map(|id| id.to_string())
                .unwrap_or_default(),
            size: bytes.len() as u64,
        })
        .collect();
    refs.sort_by(|a, b| a.name.cmp(&b.name));
    e.payload = refs;
    e.id()
}

fn imported_event(kind: &str, actor: &str, time: &str, data: serde_json::Value) -> Event {
    Event {
        v: FORMAT_VERSION,
        kind: kind.to_owned(),
        actor: actor.to_owned(),
        time: time.to_owned(),
        nonce: None,
        payload: Vec::new(),
        data,
    }
}

fn stored_time(s: &str, what: &str) -> Result<String> {
    when::parse_source_time(s)
        .map(when::format_event_time)
        .ok_or_else(|| Error::usage(format!("{what}: cannot read the time {s:?}")))
}

/// A subject for a message whose source has none: its first heading or first non-empty line.
fn derive_subject(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("(no subject)");
    let mut s: String = line.chars().filter(|c| !c.is_control()).collect();
    if s.len() > 120 {
        let mut cut = 120;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

// ---------------------------------------------------------------------------------------------------------
// seed-000 events.jsonl

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
    let ex = existing(log)?;
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
        let at = |e: Error| Error::usage(format!("line {lineno}: {e}"));
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

// ---------------------------------------------------------------------------------------------------------
// seed-003 maildir

/// Where a file sits in its mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Unread,
    Read,
    Archived,
}

impl State {
    pub fn subdir(&self) -> Option<&'static str> {
        match self {
            State::Unread => None,
            State::Read => Some("read"),
            State::Archived => Some("archive"),
        }
    }
}

struct Parsed {
    path: PathBuf,
    mailbox: String,
    state: State,
    file_name: String,
    doc: Document,
}

/// The message files of a maildir, in path order.
fn walk(dir: &Path, report: &mut ImportReport) -> Result<Vec<Parsed>> {
    let read_dir = |p: &Path| -> Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| Error::io(format!("reading {}", p.display()), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        v.sort();
        Ok(v)
    };
    if !dir.is_dir() {
        return Err(Error::not_found("maildir", dir.display().to_string()));
    }
    let mut out = Vec::new();
    for mbox in read_dir(dir)? {
        if !mbox.is_dir() {
            continue;
        }
        let name = mbox
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if name.starts_with('.') {
            continue;
        }
        if let Err(e) = names::validate_name("mailbox", &name) {
            report.skipped.push(format!("{}: {e}", mbox.display()));
            continue;
        }
        for (sub, state) in [
            (None, State::Unread),
            (Some("read"), State::Read),
            (Some("archive"), State::Archived),
        ] {
            let d = match sub {
                Some(s) => mbox.join(s),
                None => mbox.clone(),
            };
            if !d.is_dir() {
                continue;
            }
            for f in read_dir(&d)? {
                if f.extension().and_then(|e| e.to_str()) != Some("md") || !f.is_file() {
                    continue;
                }
                report.records += 1;
                let bytes = std::fs::read(&f)
                    .map_err(|e| Error::io(format!("reading {}", f.display()), e))?;
                let text = message::utf8(bytes, &f.display().to_string())?;
                let doc = frontmatter::parse(&text)
                    .map_err(|e| Error::usage(format!("{}: {e}", f.display())))?;
                out.push(Parsed {
                    file_name: f
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default()
                        .to_owned(),
                    path: f,
                    mailbox: name.clone(),
                    state,
                    doc,
                });
            }
        }
    }
    Ok(out)
}

/// Fields of the frontmatter that import maps; everything else is kept in `headers`.
const KNOWN: &[&str] = &[
    "from",
    "to",
    "type",
    "timestamp",
    "needs_response",
    "priority",
    "tags",
    "in_reply_to",
    "thread_id",
    "expires",
    "read_at",
    "archived_at",
    "subject",
    "id",
    "nonce",
    "attachments",
    "files",
];

fn is_known(key: &str) -> bool {
    KNOWN.contains(&key) || key.starts_with("members.") || key.starts_with("source.")
}

fn boolean(v: &str, what: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Ok(true),
        "false" | "no" | "off" | "" => Ok(false),
        _ => Err(Error::usage(format!("{what}: {v:?} is not true or false"))),
    }
}

/// The send event of one file; `parent` is the resolved id of its `in_reply_to`, if any.
fn send_event(p: &Parsed, groups: &Groups, parent: Option<&EventId>) -> Result<NewEvent> {
    let at = |e: Error| Error::usage(format!("{}: {e}", p.path.display()));
    let doc = &p.doc;
    let need = |k: &str| {
        doc.scalar(k)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| Error::usage(format!("{}: no {k} in the frontmatter", p.path.display())))
    };
    let from = need("from")?;
    message::validate_persona(from).map_err(at)?;
    let to = doc.get("to").map(Value::to_list).unwrap_or_default();
    let member_keys: Vec<&frontmatter::Field> = doc
        .fields
        .iter()
        .filter(|f| f.key.starts_with("members."))
        .collect();
    let (to, groups_map) = if member_keys.is_empty() {
        let r = groups.resolve(&to).map_err(at)?;
        (r.to, r.groups)
    } else {
        let mut g = BTreeMap::new();
        for f in member_keys {
            let name = &f.key["members.".len()..];
            let members = f.value.to_list();
            for m in &members {
                message::validate_persona(m).map_err(at)?;
            }
            g.insert(name.to_owned(), members);
        }
        let r = Groups::default().resolve(&to).map_err(at)?;
        (r.to, g)
    };
    let msg_type = need("type")?;
    names::validate_name("message type", msg_type).map_err(at)?;
    let time = stored_time(need("timestamp")?, &p.path.display().to_string())?;
    let body = doc.body.clone();
    message::validate_body(&body).map_err(at)?;
    let subject = match doc.scalar("subject").map(str::trim) {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => derive_subject(&body),
    };
    message::validate_subject(&subject).map_err(at)?;
    let priority = match doc.scalar("priority") {
        Some(v) if !v.is_empty() => Priority::parse(v).map_err(at)?,
        _ => Priority::Normal,
    };
    let tags = doc.get("tags").map(Value::to_list).unwrap_or_default();
    for t in &tags {
        names::validate_name("tag", t).map_err(at)?;
    }
    let in_reply_to = match (parent, doc.scalar("in_reply_to")) {
        (Some(id), _) => Some(id.to_hex()),
        (None, Some(f)) if !f.is_empty() => Some(f.to_owned()),
        _ => None,
    };
    let expires = match doc.scalar("expires") {
        Some(e) if !e.is_empty() => Some(stored_time(e, &p.path.display().to_string())?),
        _ => None,
    };
    let urls = doc
        .get("attachments")
        .map(Value::to_list)
        .unwrap_or_default();
    for u in &urls {
        message::validate_url(u).map_err(at)?;
    }
    let mut files = Vec::new();
    if let Some(names_list) = doc.get("files") {
        let stem = p.file_name.trim_end_matches(".md");
        let side = p
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .join(format!("{stem}.files"));
        for n in names_list.to_list() {
            names::validate_file_name(&n).map_err(at)?;
            let fp = side.join(&n);
            let bytes = std::fs::read(&fp)
                .map_err(|e| Error::io(format!("reading {}", fp.display()), e))?;
            files.push((n, bytes));
        }
    }
    let source = match doc.scalar("source.format") {
        Some(f) => Some(Source {
            format: f.to_owned(),
            event_id: doc.scalar("source.event_id").map(str::to_owned),
            message_id: match doc.scalar("source.message_id") {
                Some(m) => Some(m.parse().map_err(|_| {
                    Error::usage(format!(
                        "{}: source.message_id {m:?} is not an integer",
                        p.path.display()
                    ))
                })?),
                None => None,
            },
        }),
        None => None,
    };
    let headers: BTreeMap<String, String> = doc
        .fields
        .iter()
        .filter(|f| !is_known(&f.key))
        .map(|f| (f.key.clone(), frontmatter::write_value(&f.value)))
        .collect();
    let data = SendData {
        to,
        groups: groups_map,
        subject,
        body,
        msg_type: msg_type.to_owned(),
        priority,
        tags,
        needs_response: boolean(
            doc.scalar("needs_response").unwrap_or("false"),
            &p.path.display().to_string(),
        )?,
        in_reply_to,
        thread: doc
            .scalar("thread_id")
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        expires,
        urls,
        headers,
        source,
    };
    let mut event = imported_event(kinds::SEND, from, &time, to_value(&data)?);
    event.nonce = doc
        .scalar("nonce")
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    Ok(NewEvent { event, files })
}

/// Import a seed-003 maildir (`.mail/`): one mailbox directory per persona, group or `__broadcast`, with
/// unread messages at its root, read ones in `read/` and archived ones in `archive/`.
pub fn import_maildir(log: &Log<'_>, groups: &Groups, dir: &Path) -> Result<ImportReport> {
    let ex = existing(log)?;
    let mut report = ImportReport {
        format: "maildir".into(),
        ..ImportReport::default()
    };
    let parsed = walk(dir, &mut report)?;
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, p) in parsed.iter().enumerate() {
        by_name.entry(p.file_name.as_str()).or_insert(i);
    }
    // Replies need their parent's id, which depends on the parent's own content: build in rounds, a reply
    // after its parent. Files that reply to each other in a cycle keep their file names as references.
    let mut built: Vec<Option<(NewEvent, EventId, usize)>> = vec![None; parsed.len()];
    let mut remaining: Vec<usize> = (0..parsed.len()).collect();
    let mut round = 0;
    while !remaining.is_empty() {
        round += 1;
        let mut deferred = Vec::new();
        for &i in &remaining {
            let p = &parsed[i];
            let parent = match p.doc.scalar("in_reply_to").filter(|s| !s.is_empty()) {
                None => None,
                Some(name) => match by_name.get(name).copied().filter(|j| *j != i) {
                    Some(j) => match &built[j] {
                        Some((_, id, _)) => Some(*id),
                        None => {
                            deferred.push(i);
                            continue;
                        }
                    },
                    None => ex.file_names.get(name.trim_end_matches(".md")).copied(),
                },
            };
            let ev = send_event(p, groups, parent.as_ref())?;
            let id = event_id_with_files(log, &ev)?;
            built[i] = Some((ev, id, round));
        }
        if deferred.len() == remaining.len() {
            for &i in &deferred {
                let ev = send_event(&parsed[i], groups, None)?;
                let id = event_id_with_files(log, &ev)?;
                built[i] = Some((ev, id, round));
            }
            deferred.clear();
        }
        remaining = deferred;
    }
    let mut sends: Vec<(usize, String, PathBuf, NewEvent, EventId)> = Vec::new();
    let mut marks: Vec<(String, PathBuf, NewEvent)> = Vec::new();
    let mut message_ids = HashSet::new();
    for (i, b) in built.into_iter().enumerate() {
        let (ev, id, round) = b.expect("every file built");
        let p = &parsed[i];
        message_ids.insert(id);
        let time = ev.event.time.clone();
        // The mailbox owner's state: read/ and archive/ hold messages the owner processed.
        if p.state != State::Unread {
            if p.mailbox == BROADCAST {
                report.skipped.push(format!(
                    "{}: the state of a {BROADCAST} message belongs to no persona",
                    p.path.display()
                ));
            } else {
                let read_at = match p.doc.scalar("read_at").filter(|s| !s.is_empty()) {
                    Some(r) => Some(stored_time(r, &p.path.display().to_string())?),
                    None if p.state == State::Read => Some(time.clone()),
                    None => None,
                };
                let mark = |kind: &str, at: &str| -> Result<NewEvent> {
                    let data = MarkData {
                        message: id.to_hex(),
                        tag: None,
                        source: None,
                    };
                    Ok(NewEvent::new(imported_event(
                        kind,
                        &p.mailbox,
                        at,
                        to_value(&data)?,
                    )))
                };
                if let Some(r) = &read_at {
                    marks.push((r.clone(), p.path.clone(), mark(kinds::READ, r)?));
                }
                if p.state == State::Archived {
                    let at = match p.doc.scalar("archived_at").filter(|s| !s.is_empty()) {
                        Some(a) => stored_time(a, &p.path.display().to_string())?,
                        None => read_at.clone().unwrap_or(time.clone()),
                    };
                    marks.push((at.clone(), p.path.clone(), mark(kinds::ARCHIVE, &at)?));
                }
            }
        }
        sends.push((round, time, p.path.clone(), ev, id));
    }
    report.messages = message_ids.len();
    // Parents before replies (a reply's round is later than its parent's), then by time.
    sends.sort_by(|a, b| (a.0, &a.1, &a.2).cmp(&(b.0, &b.1, &b.2)));
    marks.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let events: Vec<NewEvent> = sends
        .into_iter()
        .map(|s| s.3)
        .chain(marks.into_iter().map(|m| m.2))
        .collect();
    append_new(log, &ex, events, &mut report)?;
    Ok(report)
}
