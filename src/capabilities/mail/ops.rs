//! Mail operations on a repository: send, mark, look up, read attachments, count.
//!
//! Private to `src/capabilities/mail/`: frontends and other capabilities reach these through the use cases of
//! [`super::api`], which add the persona checks and the documents.
//!
//! Every write is checked before anything is written; a rejected request leaves the log untouched.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use gix::objs::FindExt;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::kinds::{self, MarkData, SendData};
use super::message::{self, SendRequest};
use super::recipients::Groups;
use super::view::{Filter, Header, Item, MailView, Marks};
use crate::kit::error::{Error, Result};
use crate::kit::names;
use crate::store::eventlog::cache::{CacheLock, Loaded};
use crate::store::eventlog::event::{decode_event, parse_message, Framed};
use crate::store::eventlog::{Appended, Event, EventId, Log, NewEvent};

/// The mail log of `repo`.
pub fn log(repo: &gix::Repository) -> Result<Log<'_>> {
    Log::open(repo, super::LOG)
}

/// The mailboxes as this replica sees them, refreshing the cache; a cache that cannot be read or brought
/// up to date is thrown away and rebuilt. Callers hold the cache lock (see [`with_view`]).
fn open_view(log: &Log<'_>, lock: &CacheLock) -> Result<Loaded<MailView>> {
    match log.project_locked::<MailView>(lock) {
        Ok(l) => Ok(l),
        Err(_) if cache_dir(log).exists() => {
            clear_cache(log);
            log.project_locked::<MailView>(lock)
        }
        Err(e) => Err(e),
    }
}

fn cache_dir(log: &Log<'_>) -> std::path::PathBuf {
    log.cache_dir(<MailView as crate::store::eventlog::cache::Projection>::NAME)
}

fn clear_cache(log: &Log<'_>) {
    let _ = std::fs::remove_dir_all(cache_dir(log));
}

/// Run `f` on the view, holding the cache lock; when a cache partition turns out unreadable, rebuild
/// once and run again. Do not call it from inside `f`.
///
/// When the log carries warm views (`Log::with_warm`: the MCP server, the web view), the view of the
/// current tips is reused from memory when there is one, and kept after a successful call.
pub fn with_view<T>(log: &Log<'_>, mut f: impl FnMut(&mut MailView) -> Result<T>) -> Result<T> {
    // The view loads its partitions lazily, so the lock spans the whole of `f`.
    let lock = log.lock_cache(<MailView as crate::store::eventlog::cache::Projection>::NAME);
    let warm = log.warm().filter(|_| lock.is_held() && !log.full_replay());
    let warm_tips = match warm {
        Some(_) => Some(log.tips()?),
        None => None,
    };
    if let (Some(warm), Some(tips)) = (warm, &warm_tips) {
        if let Some(mut view) = warm.take::<MailView>(&cache_dir(log), tips) {
            match f(&mut view) {
                // A partition it had not loaded yet turned out damaged: answer the cold way below.
                Err(Error::Corrupt { .. }) => {}
                other => {
                    if other.is_ok() {
                        warm.put(cache_dir(log), tips.clone(), view);
                    }
                    return other;
                }
            }
        }
    }
    let mut loaded = open_view(log, &lock)?;
    match f(&mut loaded.view) {
        Ok(value) => {
            // Kept only if the tips did not move while the view was folded and read.
            if let (Some(warm), Some(tips)) = (warm, warm_tips) {
                if log.tips().ok().as_ref() == Some(&tips) {
                    warm.put(cache_dir(log), tips, loaded.view);
                }
            }
            Ok(value)
        }
        Err(Error::Corrupt { .. }) => {
            // A damaged or vanished cache file: rebuild once; if that fails too (the cache directory keeps
            // vanishing, a checkpoint that seals but does not decode), answer from the log in memory.
            crate::store::eventlog::checkpoint::distrust_seed(&cache_dir(log));
            clear_cache(log);
            let mut loaded = log.project_locked::<MailView>(&lock)?;
            match f(&mut loaded.view) {
                Err(Error::Corrupt { .. }) => {
                    let mut loaded = log.fold_from_log::<MailView>(&log.tips()?)?;
                    f(&mut loaded.view)
                }
                other => other,
            }
        }
        other => other,
    }
}

/// Check a request and turn it into the send event (nothing is written).
pub fn build_send(req: SendRequest, groups: &Groups) -> Result<NewEvent> {
    message::validate_persona(&req.from)?;
    let resolved = groups.resolve(&req.to)?;
    message::validate_subject(&req.subject)?;
    message::validate_body(&req.body)?;
    message::validate_type(&req.msg_type)?;
    let mut tags: Vec<String> = Vec::new();
    for t in req.tags {
        names::validate_name("tag", &t)?;
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    if tags.len() > message::MAX_TAGS {
        return Err(Error::usage(format!(
            "{} tags, over the limit of {}",
            tags.len(),
            message::MAX_TAGS
        )));
    }
    for u in &req.urls {
        message::validate_url(u)?;
    }
    if req.files.len() + req.urls.len() > message::MAX_ATTACHMENTS {
        return Err(Error::usage(format!(
            "more than {} attachments",
            message::MAX_ATTACHMENTS
        )));
    }
    let mut seen = BTreeSet::new();
    for (name, bytes) in &req.files {
        names::validate_file_name(name)?;
        if !seen.insert(name.as_str()) {
            return Err(Error::usage(format!(
                "two attachments are named {name:?}: rename one"
            )));
        }
        if bytes.len() > message::MAX_ATTACHMENT_BYTES {
            return Err(Error::usage(format!(
                "attachment {name} is {} bytes, over the limit of {} bytes (8 MiB)",
                bytes.len(),
                message::MAX_ATTACHMENT_BYTES
            )));
        }
    }
    if let Some(r) = &req.in_reply_to {
        if EventId::from_hex(r).is_none() {
            return Err(Error::usage(format!(
                "in-reply-to {r:?} is not a full message id"
            )));
        }
    }
    if let Some(t) = &req.thread {
        if EventId::from_hex(t).is_none() {
            names::validate_name("thread", t)?;
        }
    }
    let data = SendData {
        to: resolved.to,
        groups: resolved.groups,
        subject: req.subject,
        body: req.body,
        msg_type: req.msg_type,
        priority: req.priority,
        tags,
        needs_response: req.needs_response,
        in_reply_to: req.in_reply_to,
        thread: req.thread,
        expires: req.expires,
        urls: req.urls,
        headers: BTreeMap::new(),
        source: None,
    };
    let event = Event::new(kinds::SEND, &req.from, to_value(&data)?);
    // Fail on an oversized event before the attachments' blobs are written (without attachments the append
    // checks it before writing anything, and encoding the event twice costs every send).
    if !req.files.is_empty() {
        event.canonical()?;
    }
    Ok(NewEvent {
        event,
        files: req.files,
    })
}

pub(crate) fn to_value<T: Serialize>(v: &T) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::wrap("encoding mail data", e))
}

/// Append to the mail log; the log joins everything this replica has seen (fetched copies included)
/// first, so a plain `git push` afterwards is a fast-forward.
pub fn append(log: &Log<'_>, events: Vec<NewEvent>) -> Result<Vec<Appended>> {
    log.append_batch(events)
}

/// Send a message; returns where its event landed (the message id is `Appended::id`).
pub fn send(log: &Log<'_>, req: SendRequest, groups: &Groups) -> Result<Appended> {
    let event = build_send(req, groups)?;
    Ok(append(log, vec![event])?.remove(0))
}

/// A message with everything its send event says.
#[derive(Debug, Clone)]
pub struct Message {
    pub id: EventId,
    pub lamport: u64,
    pub event: Event,
    pub data: SendData,
}

impl Message {
    /// The header the views show, with the thread and claim the fold computed.
    pub fn header(&self, view: &mut MailView) -> Result<Header> {
        let id = self.id.to_hex();
        let thread = view.thread_of(&id)?;
        let mut h = Header::from_send(&self.id, self.lamport, &self.event, &self.data, thread);
        h.claim = view.meta(&id)?.winner();
        Ok(h)
    }
}

/// Read the send event of a message from its commit.
pub fn load_message(repo: &gix::Repository, commit: ObjectId) -> Result<Message> {
    let mut buf = Vec::new();
    let c = repo
        .objects
        .find_commit(&commit, &mut buf)
        .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
    let corrupt = |m: String| Error::Corrupt {
        path: format!("commit {commit}").into(),
        message: m,
    };
    let Ok(Framed::Event {
        json,
        lamport,
        claimed_id,
        ..
    }) = parse_message(c.message)
    else {
        return Err(corrupt("not an event commit".into()));
    };
    let (id, event) = decode_event(json, claimed_id, false).map_err(|e| corrupt(e.to_string()))?;
    if event.kind != kinds::SEND {
        return Err(corrupt(format!("{} is not a message", id.to_hex())));
    }
    let data = SendData::deserialize(&event.data).map_err(|e| corrupt(e.to_string()))?;
    Ok(Message {
        id,
        lamport,
        event,
        data,
    })
}

/// Resolve a user-given id or prefix and read the message.
///
/// Messages imported from a seed-000 `events.jsonl` keep their integer `message_id` as an alias, so that
/// prompts written for seed 000 keep working: `#42` always names the alias; bare digits shorter than an
/// abbreviated id (`42`) too; longer bare digits are a hex prefix first, then an alias.
pub fn find(log: &Log<'_>, view: &mut MailView, prefix: &str) -> Result<Message> {
    if let Some(n) = prefix.strip_prefix('#') {
        let n: i64 = n
            .parse()
            .map_err(|_| Error::usage(format!("{prefix:?}: #N wants an integer message_id")))?;
        return find_alias(log, view, n)?
            .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Message, prefix));
    }
    let digits = !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit());
    if digits && prefix.len() < crate::kit::abbrev::MIN_ABBREV {
        let n: i64 = prefix
            .parse()
            .map_err(|_| Error::not_found(crate::kit::error::Thing::Message, prefix))?;
        return find_alias(log, view, n)?
            .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Message, prefix));
    }
    match view.resolve(prefix) {
        Ok((_, commit)) => load_message(log.repo(), commit),
        Err(Error::NotFound { .. }) if digits => {
            let n: i64 = prefix
                .parse()
                .map_err(|_| Error::not_found(crate::kit::error::Thing::Message, prefix))?;
            find_alias(log, view, n)?
                .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Message, prefix))
        }
        Err(e) => Err(e),
    }
}

/// The message imported from seed 000 with `message_id` `n` (the first one, if a file repeated it).
fn find_alias(log: &Log<'_>, view: &mut MailView, n: i64) -> Result<Option<Message>> {
    let mut found: Option<Message> = None;
    for h in view.all_headers()? {
        let Some(id) = EventId::from_hex(&h.id) else {
            continue;
        };
        let Some(commit) = view.commit_of(&id)? else {
            continue;
        };
        let msg = load_message(log.repo(), commit)?;
        let alias = msg.data.source.as_ref().and_then(|s| s.message_id);
        if alias == Some(n) && found.as_ref().is_none_or(|f| msg.lamport < f.lamport) {
            found = Some(msg);
        }
    }
    Ok(found)
}

/// The bytes of a file attachment.
pub fn attachment(repo: &gix::Repository, msg: &Message, name: &str) -> Result<Vec<u8>> {
    let p = msg
        .event
        .payload
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = msg.event.payload.iter().map(|p| p.name.as_str()).collect();
            Error::not_found(
                crate::kit::error::Thing::Attachment,
                if names.is_empty() {
                    format!("{name} (the message has no file attachments)")
                } else {
                    format!("{name} (it has {})", names.join(", "))
                },
            )
        })?;
    let blob: ObjectId = p
        .blob
        .parse()
        .map_err(|e| Error::wrap(format!("bad blob id {}", p.blob), e))?;
    Ok(repo.find_object(blob)?.detach().data)
}

/// A per-persona mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    Read,
    Unread,
    Tag(String),
    Untag(String),
    Trash,
    Untrash,
    Archive,
    Unarchive,
}

impl Mark {
    pub fn kind(&self) -> &'static str {
        match self {
            Mark::Read => kinds::READ,
            Mark::Unread => kinds::UNREAD,
            Mark::Tag(_) => kinds::TAG,
            Mark::Untag(_) => kinds::UNTAG,
            Mark::Trash => kinds::TRASH,
            Mark::Untrash => kinds::UNTRASH,
            Mark::Archive => kinds::ARCHIVE,
            Mark::Unarchive => kinds::UNARCHIVE,
        }
    }

    /// Whether the mark would change nothing.
    pub fn is_noop(&self, m: &Marks) -> bool {
        match self {
            Mark::Read => m.read.is_some(),
            Mark::Unread => m.read.is_none(),
            Mark::Tag(t) => m.tags.contains(t),
            Mark::Untag(t) => !m.tags.contains(t),
            Mark::Trash => m.trashed,
            Mark::Untrash => !m.trashed,
            Mark::Archive => m.archived.is_some(),
            Mark::Unarchive => m.archived.is_none(),
        }
    }

    pub fn event(&self, persona: &str, message: &EventId) -> Result<Event> {
        let tag = match self {
            Mark::Tag(t) | Mark::Untag(t) => {
                names::validate_name("tag", t)?;
                Some(t.clone())
            }
            _ => None,
        };
        let data = MarkData {
            message: message.to_hex(),
            tag,
            source: None,
        };
        Ok(Event::new(self.kind(), persona, to_value(&data)?))
    }
}

/// Record `mark` for `persona` unless it is already so; `None` when nothing needed writing.
pub fn set_mark(
    log: &Log<'_>,
    view: &mut MailView,
    persona: &str,
    message: &EventId,
    mark: Mark,
) -> Result<Option<Appended>> {
    message::validate_persona(persona)?;
    // Only a recipient has a mailbox state for the message: anyone else's mark would be noise that
    // every view then carries.
    let commit = view
        .commit_of(message)?
        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Message, message.to_hex()))?;
    let header = load_message(log.repo(), commit)?.header(view)?;
    if !header.reaches(persona) {
        return Err(Error::usage(format!(
            "{persona} is not a recipient of message {}: only its recipients can mark it",
            message.short(12)
        )));
    }
    let current = view.marks(persona, &message.to_hex())?;
    if mark.is_noop(&current) {
        return Ok(None);
    }
    let event = NewEvent::new(mark.event(persona, message)?);
    Ok(Some(append(log, vec![event])?.remove(0)))
}

/// Per-persona counts for `mail stats`.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct PersonaStats {
    /// Messages delivered to the persona (broadcasts included), whatever their state.
    pub received: u64,
    /// What `inbox --unread` lists.
    pub unread: u64,
    pub sent: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Unanswered {
    pub id: String,
    pub from: String,
    pub to: Vec<String>,
    pub subject: String,
    pub time: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub messages: u64,
    pub personas: BTreeMap<String, PersonaStats>,
    /// Messages with `needs_response` that nobody answered (no message has them as `in_reply_to`),
    /// expired ones excluded.
    pub unanswered: u64,
    pub oldest_unanswered: Option<Unanswered>,
}

/// Every persona's counts ([`MailView::tally`]) of the log as it is now. A frontend that keeps warm views
/// keeps the counts too, for the same tips and until a counted message expires
/// ([`crate::capabilities::mail::view::Tally::valid_until`]): its fleet page then costs a look-up, and the view it keeps
/// warm does not hold every mailbox for it.
pub fn tally(log: &Log<'_>, now: DateTime<Utc>) -> Result<crate::capabilities::mail::view::Tally> {
    use crate::capabilities::mail::view::Tally;
    let key = cache_dir(log).join("tally");
    let warm = log.warm().filter(|_| !log.full_replay());
    let tips = match warm {
        Some(_) => Some(log.tips()?),
        None => None,
    };
    if let (Some(warm), Some(tips)) = (warm, &tips) {
        if let Some(kept) = warm.take::<Tally>(&key, tips) {
            if kept.valid_until.is_none_or(|t| now < t) {
                warm.put(key, tips.clone(), kept.clone());
                return Ok(kept);
            }
        }
    }
    let tally = with_view(log, |view| view.tally(now))?;
    if let (Some(warm), Some(tips)) = (warm, tips) {
        // Kept only if the tips did not move while it was counted.
        if log.tips().ok().as_ref() == Some(&tips) {
            warm.put(key, tips, tally.clone());
        }
    }
    Ok(tally)
}

/// The `mail stats` document of a [`MailView::tally`].
pub fn stats_of(tally: &crate::capabilities::mail::view::Tally) -> Stats {
    Stats {
        messages: tally.messages,
        personas: tally
            .personas
            .iter()
            .map(|(p, t)| {
                let s = PersonaStats {
                    received: t.received,
                    unread: t.unread,
                    sent: t.sent,
                };
                (p.clone(), s)
            })
            .collect(),
        unanswered: tally.unanswered,
        oldest_unanswered: tally.oldest_unanswered.as_ref().map(|h| Unanswered {
            id: h.id.clone(),
            from: h.from.clone(),
            to: h.to.clone(),
            subject: h.subject.clone(),
            time: h.time.clone(),
        }),
    }
}

/// What `inbox --unread` shows for `persona`.
pub fn unread(view: &mut MailView, persona: &str, now: DateTime<Utc>) -> Result<Vec<Item>> {
    view.inbox(
        persona,
        &Filter {
            unread: true,
            ..Filter::default()
        },
        now,
    )
}
