//! What every import shares: deterministic events, deduplication against the log, and appending what is new.
//! The formats are [`super::jsonl`] (seed 000's `events.jsonl`) and [`super::maildir::import`] (seed 003's
//! `.mail/`).
//!
//! Imported events are deterministic: no nonce, the time from the source, ids of referenced messages
//! computed from their content. Importing the same source twice therefore yields the same events, and
//! events the log already holds (or that occur twice in the source) are not appended again.
//! Nothing is written unless the whole source reads cleanly; records that cannot be applied (a mark on a
//! message the log does not have, an unknown event type) are skipped and reported.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::kinds::{self, SendData};
use super::when;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{Event, EventId, Log, LoggedEvent, NewEvent, FORMAT_VERSION};

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
pub(super) struct Existing {
    pub ids: HashSet<EventId>,
    /// seed-000 message number to message id, from earlier JSONL imports.
    pub jsonl_messages: HashMap<i64, EventId>,
    /// maildir file base name (`{timestamp}_{from}_{type}`) to message id.
    pub file_names: HashMap<String, EventId>,
}

/// How a source names a message's file (maildir), to find messages imported earlier from it.
pub(super) type FileName<'a> = &'a dyn Fn(&LoggedEvent, &SendData) -> String;

pub(super) fn existing(log: &Log<'_>, file_name: Option<FileName<'_>>) -> Result<Existing> {
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
        if let Some(name) = file_name {
            ex.file_names.entry(name(e, &d)).or_insert(e.id);
        }
    }
    Ok(ex)
}

/// Append what is new; fill the counts.
pub(super) fn append_new(
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
pub(super) fn event_id_with_files(log: &Log<'_>, ev: &NewEvent) -> Result<EventId> {
    if ev.files.is_empty() {
        return ev.event.id();
    }
    let mut e = ev.event.clone();
    let mut refs: Vec<crate::store::eventlog::PayloadRef> = ev
        .files
        .iter()
        .map(|(name, bytes)| crate::store::eventlog::PayloadRef {
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

pub(super) fn imported_event(
    kind: &str,
    actor: &str,
    time: &str,
    data: serde_json::Value,
) -> Event {
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

pub(super) fn stored_time(s: &str, what: &str) -> Result<String> {
    when::parse_source_time(s)
        .map(when::format_event_time)
        .ok_or_else(|| Error::usage(format!("{what}: cannot read the time {s:?}")))
}

/// A subject for a message whose source has none: its first heading or first non-empty line.
pub(super) fn derive_subject(body: &str) -> String {
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
