//! Importing seed 003's `.mail/` maildir (see [`crate::capabilities::mail::import`] for what every import shares).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{base_name, Folder};
use crate::capabilities::mail::frontmatter::{self, Document, Value};
use crate::capabilities::mail::import::{
    append_new, derive_subject, event_id_with_files, existing, imported_event, stored_time,
    ImportReport,
};
use crate::capabilities::mail::kinds::{self, MarkData, SendData, Source};
use crate::capabilities::mail::message::{self, Priority, BROADCAST};
use crate::capabilities::mail::ops::to_value;
use crate::capabilities::mail::recipients::Groups;
use crate::kit::error::{Error, Result};
use crate::kit::names;
use crate::store::eventlog::{EventId, Log, NewEvent};

struct Parsed {
    path: PathBuf,
    mailbox: String,
    folder: Folder,
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
        return Err(Error::not_found(
            crate::kit::error::Thing::Maildir,
            dir.display().to_string(),
        ));
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
            (None, Folder::Unread),
            (Some("read"), Folder::Read),
            (Some("archive"), Folder::Archived),
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
                    folder: state,
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
    let ex = existing(log, Some(&base_name))?;
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
        if p.folder != Folder::Unread {
            if p.mailbox == BROADCAST {
                report.skipped.push(format!(
                    "{}: the state of a {BROADCAST} message belongs to no persona",
                    p.path.display()
                ));
            } else {
                let read_at = match p.doc.scalar("read_at").filter(|s| !s.is_empty()) {
                    Some(r) => Some(stored_time(r, &p.path.display().to_string())?),
                    None if p.folder == Folder::Read => Some(time.clone()),
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
                if p.folder == Folder::Archived {
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
