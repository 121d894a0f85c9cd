//! The mail projection: every persona's mailbox, folded over the log's total order.
//!
//! The fold is a pure function of the ordered events, so replicas holding the same events agree. Rules:
//!
//! - `mail.send` delivers the message to each direct recipient, to each member recorded for a group
//!   recipient, and, for `__broadcast`, to everyone but the sender. Its thread is `data.thread`, else the
//!   thread of the message it answers (`in_reply_to`), else its own id.
//! - The marks (`read`/`unread`, `tag`/`untag`, `trash`/`untrash`, `archive`/`unarchive`) are per persona:
//!   the actor's own state; the last one in the total order wins. Marks on messages the fold has not seen
//!   yet are kept and apply once the message arrives.
//! - `mail.claim` counts only when the message was sent earlier in the order and the actor is one of its
//!   recipients. The winner is the first `lock` claim if there is one, else the first claim.
//! - Events whose data does not decode, or that name a persona that is not a valid name, are skipped.
//!
//! The cache (`.git/jules/cache/mail/mail/`) is partitioned so that a warm `inbox` reads only what it shows:
//!
//! | file | holds |
//! |---|---|
//! | `summary.json` | counts and which partitions exist |
//! | `index.bin` | every message id (32 bytes) and its commit (20 bytes), sorted by id |
//! | `boxes/<persona>.json` | the headers of the messages the persona received, and its marks |
//! | `sent/<persona>.json` | the messages it sent, each with the mailbox that holds its header |
//! | `meta/<xx>.json` | per message (by the first byte of its id): inherited or named thread, claims |
//! | `threads/<xx>.json` | per thread (by the first byte of sha256 of its key): its messages in order |
//!
//! Partitions are loaded on first use; an incremental refresh rewrites only those it changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use gix::ObjectId;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::kinds::{self, ClaimData, MarkData, SendData};
use super::message::{Priority, BROADCAST};
use super::recipients;
use crate::abbrev;
use crate::error::{Error, Result};
use crate::eventlog::cache::{load_json, save_json, write_atomically, Projection};
use crate::eventlog::{EventId, LoggedEvent, PayloadRef};

fn is_false(b: &bool) -> bool {
    !*b
}

/// A message id as a map key in the cache: the crate's one 32-byte id type, written as hex, read without
/// allocating.
pub use crate::id::Id32 as Key;

/// Who won the claim on a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub persona: String,
    /// Won through the remote lock (`claim --sync`), so it is final.
    pub lock: bool,
}

/// What the views show of a message without its body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub id: String,
    pub lamport: u64,
    pub time: String,
    pub from: String,
    pub to: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, Vec<String>>,
    pub subject: String,
    #[serde(rename = "type")]
    pub msg_type: String,
    pub priority: Priority,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub needs_response: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// The thread key (a message id or a thread name) when it is not the message's own id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PayloadRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<Claim>,
}

impl Header {
    pub fn from_send(
        id: &EventId,
        lamport: u64,
        event: &crate::eventlog::Event,
        data: &SendData,
        thread: String,
    ) -> Header {
        let id = id.to_hex();
        Header {
            thread: (thread != id).then_some(thread),
            id,
            lamport,
            time: event.time.clone(),
            from: event.actor.clone(),
            to: data.to.clone(),
            groups: data.groups.clone(),
            subject: data.subject.clone(),
            msg_type: data.msg_type.clone(),
            priority: data.priority,
            tags: data.tags.clone(),
            needs_response: data.needs_response,
            in_reply_to: data.in_reply_to.clone(),
            expires: data.expires.clone(),
            urls: data.urls.clone(),
            files: event.payload.clone(),
            claim: None,
        }
    }

    /// The thread key: a message id or a thread name.
    pub fn thread(&self) -> &str {
        self.thread.as_deref().unwrap_or(&self.id)
    }

    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        self.expires
            .as_deref()
            .and_then(super::when::parse_stored)
            .is_some_and(|t| t <= now)
    }

    /// The personas it reaches, apart from a broadcast.
    pub fn recipients(&self) -> BTreeSet<String> {
        recipients::personas(&self.to, &self.groups)
    }

    pub fn is_broadcast(&self) -> bool {
        self.to.iter().any(|t| t == BROADCAST)
    }

    /// Whether `persona` received it (directly, through a group, or as a broadcast).
    pub fn reaches(&self, persona: &str) -> bool {
        (self.is_broadcast() && self.from != persona) || self.recipients().contains(persona)
    }
}

/// One persona's state of one message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marks {
    /// When it was first read (since the last `unread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tags: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub trashed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<String>,
}

impl Marks {
    fn is_empty(&self) -> bool {
        *self == Marks::default()
    }
}

/// A message in a mailbox: its header and how it got there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Received {
    pub h: Header,
    /// The group (or `__broadcast`) it came through; absent when addressed to the persona directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// A persona's mailbox partition (also `__broadcast`'s, which holds only `received`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mailbox {
    #[serde(default)]
    pub received: BTreeMap<Key, Received>,
    #[serde(default)]
    pub marks: BTreeMap<Key, Marks>,
}

/// A claim as recorded, in the total order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRecord {
    pub persona: String,
    pub event: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub lock: bool,
}

/// What the fold knows about a message beyond its header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageMeta {
    /// The thread key when it is not the message's own id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimRecord>,
}

impl MessageMeta {
    pub fn winner(&self) -> Option<Claim> {
        self.claims
            .iter()
            .find(|c| c.lock)
            .or(self.claims.first())
            .map(|c| Claim {
                persona: c.persona.clone(),
                lock: c.lock,
            })
    }
}

/// Which messages of a mailbox a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Folder {
    /// Not trashed, not archived, not expired, not claimed by somebody else.
    #[default]
    Inbox,
    Archive,
    Trash,
    /// Everything received, expired and claimed ones included.
    All,
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub folder: Folder,
    pub unread: bool,
    pub msg_type: Option<String>,
    pub priority: Option<Priority>,
    /// Matches the sender's tags and the persona's own.
    pub tag: Option<String>,
    pub from: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub limit: Option<usize>,
}

/// A listed message with the persona's marks.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub header: Header,
    pub via: Option<String>,
    pub marks: Marks,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Summary {
    messages: u64,
    skipped: u64,
    abbrev: usize,
    boxes: BTreeSet<String>,
    sent: BTreeSet<String>,
    meta: BTreeSet<u8>,
    threads: BTreeSet<u8>,
}

trait PartKey: Ord + Clone {
    fn file_name(&self) -> String;
}
impl PartKey for String {
    fn file_name(&self) -> String {
        format!("{self}.json")
    }
}
impl PartKey for u8 {
    fn file_name(&self) -> String {
        format!("{self:02x}.json")
    }
}

/// A map of partitions loaded on demand from `<cache>/<sub>/`.
#[derive(Debug)]
struct Parts<K: PartKey, V> {
    sub: &'static str,
    /// The partitions that exist (on disk or in memory).
    present: BTreeSet<K>,
    loaded: BTreeMap<K, V>,
    dirty: BTreeSet<K>,
}

impl<K: PartKey, V: Default + Serialize + DeserializeOwned> Parts<K, V> {
    fn new(sub: &'static str, present: BTreeSet<K>) -> Self {
        Parts {
            sub,
            present,
            loaded: BTreeMap::new(),
            dirty: BTreeSet::new(),
        }
    }

    fn ensure(&mut self, dir: Option<&Path>, key: &K) -> Result<()> {
        if self.loaded.contains_key(key) {
            return Ok(());
        }
        let value = match (dir, self.present.contains(key)) {
            (Some(dir), true) => {
                let path = dir.join(self.sub).join(key.file_name());
                let bytes = std::fs::read(&path).map_err(|e| Error::Corrupt {
                    path: path.clone(),
                    message: format!("mail cache partition unreadable: {e}"),
                })?;
                serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                    path,
                    message: format!("mail cache partition does not decode: {e}"),
                })?
            }
            _ => V::default(),
        };
        self.loaded.insert(key.clone(), value);
        Ok(())
    }

    fn get(&mut self, dir: Option<&Path>, key: &K) -> Result<Option<&V>> {
        if !self.present.contains(key) {
            return Ok(None);
        }
        self.ensure(dir, key)?;
        Ok(self.loaded.get(key))
    }

    fn get_mut(&mut self, dir: Option<&Path>, key: &K) -> Result<&mut V> {
        self.ensure(dir, key)?;
        self.present.insert(key.clone());
        self.dirty.insert(key.clone());
        Ok(self.loaded.get_mut(key).expect("just ensured"))
    }

    fn save(&self, dir: &Path, all: bool) -> std::io::Result<()> {
        let sub = dir.join(self.sub);
        std::fs::create_dir_all(&sub)?;
        for (k, v) in &self.loaded {
            if all || self.dirty.contains(k) {
                write_atomically(
                    &sub.join(k.file_name()),
                    &serde_json::to_vec(v).map_err(std::io::Error::other)?,
                )?;
            }
        }
        Ok(())
    }
}

const RECORD: usize = 52;

/// The mail projection. See the module documentation for the fold and the cache layout.
#[derive(Debug)]
pub struct MailView {
    /// The cache directory partitions load from; `None` for a view built in memory.
    dir: Option<PathBuf>,
    /// Built from nothing: saving replaces every partition.
    fresh: bool,
    /// A partition failed to load while folding: the view cannot be trusted or saved.
    broken: Option<String>,
    summary: Summary,
    boxes: Parts<String, Mailbox>,
    /// Per sender: each message it sent and the mailbox holding its header.
    sent: Parts<String, BTreeMap<Key, String>>,
    meta: Parts<u8, BTreeMap<Key, MessageMeta>>,
    threads: Parts<u8, BTreeMap<String, Vec<String>>>,
    index: Option<Vec<(EventId, ObjectId)>>,
    index_sorted: bool,
    index_dirty: bool,
}

impl MailView {
    fn with_summary(dir: Option<PathBuf>, summary: Summary) -> Self {
        MailView {
            dir,
            fresh: false,
            broken: None,
            boxes: Parts::new("boxes", summary.boxes.clone()),
            sent: Parts::new("sent", summary.sent.clone()),
            meta: Parts::new("meta", summary.meta.clone()),
            threads: Parts::new("threads", summary.threads.clone()),
            summary,
            index: None,
            index_sorted: true,
            index_dirty: false,
        }
    }

    /// The number of messages.
    pub fn messages(&self) -> u64 {
        self.summary.messages
    }

    /// Mail events the fold skipped because their data did not decode or named an invalid persona.
    pub fn skipped(&self) -> u64 {
        self.summary.skipped
    }

    /// Every persona that has a mailbox (received or sent something), `__broadcast` excluded.
    pub fn personas(&self) -> BTreeSet<String> {
        self.boxes
            .present
            .iter()
            .chain(self.sent.present.iter())
            .filter(|p| *p != BROADCAST)
            .cloned()
            .collect()
    }

    fn load_index(&mut self) -> Result<&mut Vec<(EventId, ObjectId)>> {
        if self.index.is_none() {
            let mut index = Vec::new();
            if let Some(dir) = &self.dir {
                let path = dir.join("index.bin");
                match std::fs::read(&path) {
                    Ok(raw) if raw.len() as u64 == self.summary.messages * RECORD as u64 => {
                        index.reserve(raw.len() / RECORD);
                        for rec in raw.chunks_exact(RECORD) {
                            let id = EventId(rec[..32].try_into().expect("32 bytes"));
                            let commit =
                                ObjectId::try_from(&rec[32..]).map_err(|e| Error::Corrupt {
                                    path: path.clone(),
                                    message: format!("bad commit id: {e}"),
                                })?;
                            index.push((id, commit));
                        }
                    }
                    Ok(_) if self.summary.messages == 0 => {}
                    Err(e)
                        if e.kind() == std::io::ErrorKind::NotFound
                            && self.summary.messages == 0 => {}
                    Ok(raw) => {
                        return Err(Error::Corrupt {
                            path,
                            message: format!(
                                "{} bytes for {} messages",
                                raw.len(),
                                self.summary.messages
                            ),
                        })
                    }
                    Err(e) => {
                        return Err(Error::Corrupt {
                            path,
                            message: e.to_string(),
                        })
                    }
                }
            }
            self.index = Some(index);
            self.index_sorted = true;
        }
        let index = self.index.as_mut().expect("loaded");
        if !self.index_sorted {
            index.sort_unstable_by_key(|(id, _)| *id);
            self.index_sorted = true;
        }
        Ok(index)
    }

    /// The length at which every message id is unique (at least 7), as git abbreviates.
    pub fn abbrev(&mut self) -> Result<usize> {
        if self.index_dirty {
            let index = self.load_index()?;
            return Ok(unique_len(index));
        }
        Ok(self.summary.abbrev.max(abbrev::DEFAULT_ABBREV))
    }

    /// The message a user-given id or prefix names: its full id and the commit of its send event.
    pub fn resolve(&mut self, prefix: &str) -> Result<(EventId, ObjectId)> {
        let index = self.load_index()?;
        let p = prefix.to_ascii_lowercase();
        if let Some(full) = EventId::from_hex(&p) {
            return match index.binary_search_by_key(&full, |(id, _)| *id) {
                Ok(i) => Ok(index[i]),
                Err(_) => Err(Error::not_found("message", prefix)),
            };
        }
        // Only the ids around the prefix can match: hand those to the shared resolver.
        let lo = hex_bound(&p, b'0');
        let start = index.partition_point(|(id, _)| id.0 < lo);
        let window: Vec<String> = index[start..]
            .iter()
            .take_while(|(id, _)| id.to_hex().starts_with(&p))
            .map(|(id, _)| id.to_hex())
            .collect();
        let full = abbrev::resolve("message", prefix, &window)?;
        let id = EventId::from_hex(full).expect("index ids are hex");
        let i = index
            .binary_search_by_key(&id, |(id, _)| *id)
            .expect("resolved from the index");
        Ok(index[i])
    }

    /// The commit of a message's send event, if the message is known.
    pub fn commit_of(&mut self, id: &EventId) -> Result<Option<ObjectId>> {
        let index = self.load_index()?;
        Ok(index
            .binary_search_by_key(id, |(id, _)| *id)
            .ok()
            .map(|i| index[i].1))
    }

    /// A persona's marks on a message.
    pub fn marks(&mut self, persona: &str, id: &str) -> Result<Marks> {
        let Some(key) = Key::parse(id) else {
            return Ok(Marks::default());
        };
        let dir = self.dir.clone();
        Ok(self
            .boxes
            .get(dir.as_deref(), &persona.to_owned())?
            .and_then(|b| b.marks.get(&key).cloned())
            .unwrap_or_default())
    }

    pub fn meta(&mut self, id: &str) -> Result<MessageMeta> {
        let Some(key) = Key::parse(id) else {
            return Ok(MessageMeta::default());
        };
        let dir = self.dir.clone();
        Ok(self
            .meta
            .get(dir.as_deref(), &key.0[0])?
            .and_then(|m| m.get(&key).cloned())
            .unwrap_or_default())
    }

    /// The thread key of a message.
    pub fn thread_of(&mut self, id: &str) -> Result<String> {
        Ok(self.meta(id)?.thread.unwrap_or_else(|| id.to_owned()))
    }

    /// The messages of a thread, in the total order. Only threads of more than one message, and named
    /// ones, are indexed: any other message id is a thread of its own.
    pub fn thread(&mut self, key: &str) -> Result<Vec<String>> {
        let dir = self.dir.clone();
        Ok(self
            .threads
            .get(dir.as_deref(), &bucket_of_key(key))?
            .and_then(|t| t.get(key).cloned())
            .unwrap_or_else(|| {
                if Key::parse(key).is_some() {
                    vec![key.to_owned()]
                } else {
                    Vec::new()
                }
            }))
    }

    /// A persona's mailbox as a listing: urgent first, then newest.
    pub fn inbox(&mut self, persona: &str, f: &Filter, now: DateTime<Utc>) -> Result<Vec<Item>> {
        let dir = self.dir.clone();
        let dir = dir.as_deref();
        let own_key = persona.to_owned();
        let broadcast_key = BROADCAST.to_owned();
        // Load both partitions first, then borrow them: nothing is cloned but what is listed.
        self.boxes.get(dir, &own_key)?;
        if persona != BROADCAST {
            self.boxes.get(dir, &broadcast_key)?;
        }
        let empty = Mailbox::default();
        let own = self.boxes.loaded.get(&own_key).unwrap_or(&empty);
        let broadcast = match persona {
            BROADCAST => &empty,
            _ => self.boxes.loaded.get(&broadcast_key).unwrap_or(&empty),
        };
        let no_marks = Marks::default();
        let candidates = own.received.iter().chain(
            broadcast
                .received
                .iter()
                .filter(|(k, r)| r.h.from != persona && !own.received.contains_key(k)),
        );
        let mut picked: Vec<(&Received, &Marks)> = Vec::new();
        for (k, r) in candidates {
            let marks = own.marks.get(k).unwrap_or(&no_marks);
            if keep(&r.h, marks, persona, f, now) {
                picked.push((r, marks));
            }
        }
        picked.sort_unstable_by(|(a, _), (b, _)| {
            (a.h.priority, &b.h.time, b.h.lamport, &a.h.id).cmp(&(
                b.h.priority,
                &a.h.time,
                a.h.lamport,
                &b.h.id,
            ))
        });
        if let Some(limit) = f.limit {
            picked.truncate(limit);
        }
        Ok(picked
            .into_iter()
            .map(|(r, m)| Item {
                header: r.h.clone(),
                via: r.via.clone(),
                marks: m.clone(),
            })
            .collect())
    }

    /// The header of a message as the mailbox `holder` has it.
    fn held(&mut self, holder: &str, key: &Key) -> Result<Option<Header>> {
        let dir = self.dir.clone();
        Ok(self
            .boxes
            .get(dir.as_deref(), &holder.to_owned())?
            .and_then(|b| b.received.get(key))
            .map(|r| r.h.clone()))
    }

    /// What a persona sent, newest first.
    pub fn sent(&mut self, persona: &str) -> Result<Vec<Header>> {
        let dir = self.dir.clone();
        let list: Vec<(Key, String)> = self
            .sent
            .get(dir.as_deref(), &persona.to_owned())?
            .map(|s| s.iter().map(|(k, h)| (*k, h.clone())).collect())
            .unwrap_or_default();
        let mut out = Vec::with_capacity(list.len());
        for (key, holder) in list {
            out.extend(self.held(&holder, &key)?);
        }
        out.sort_by(|a, b| (&b.time, b.lamport).cmp(&(&a.time, a.lamport)));
        Ok(out)
    }

    /// Every message once: the union of the sent lists.
    pub fn all_headers(&mut self) -> Result<Vec<Header>> {
        let mut out = Vec::new();
        for p in self.sent.present.clone() {
            out.extend(self.sent(&p)?);
        }
        out.sort_by(|a, b| (a.lamport, &a.id).cmp(&(b.lamport, &b.id)));
        Ok(out)
    }

    fn fail(&mut self, e: Error) {
        if self.broken.is_none() {
            self.broken = Some(e.to_string());
        }
    }

    fn apply_send(&mut self, e: &LoggedEvent, data: SendData) -> Result<()> {
        let key = Key(e.id.0);
        let id = e.id.to_hex();
        let thread = match &data.thread {
            Some(t) => t.clone(),
            None => match data
                .in_reply_to
                .as_deref()
                .filter(|p| EventId::from_hex(p).is_some())
            {
                Some(parent) => self.thread_of(parent)?,
                None => id.clone(),
            },
        };
        let header = Header::from_send(&e.id, e.lamport, &e.event, &data, thread.clone());
        let dir = self.dir.clone();
        let dir = dir.as_deref();
        if thread != id {
            self.meta
                .get_mut(dir, &key.0[0])?
                .entry(key)
                .or_default()
                .thread = Some(thread.clone());
            // A message that starts its own thread is indexed only once another message joins it.
            let threads = self.threads.get_mut(dir, &bucket_of_key(&thread))?;
            let list = threads.entry(thread.clone()).or_default();
            if list.is_empty() && Key::parse(&thread).is_some() {
                list.push(thread);
            }
            if !list.contains(&id) {
                list.push(id.clone());
            }
        }
        for p in header.recipients() {
            let via = if header.to.contains(&p) {
                None
            } else {
                header
                    .groups
                    .iter()
                    .find(|(_, m)| m.contains(&p))
                    .map(|(g, _)| g.clone())
            };
            self.boxes.get_mut(dir, &p)?.received.insert(
                key,
                Received {
                    h: header.clone(),
                    via,
                },
            );
        }
        if header.is_broadcast() {
            self.boxes
                .get_mut(dir, &BROADCAST.to_owned())?
                .received
                .insert(
                    key,
                    Received {
                        h: header.clone(),
                        via: Some(BROADCAST.to_owned()),
                    },
                );
        }
        let holder = match header.recipients().into_iter().next() {
            Some(p) => p,
            None => BROADCAST.to_owned(),
        };
        self.sent.get_mut(dir, &header.from)?.insert(key, holder);
        if self.index.is_none() {
            self.load_index()?;
        }
        // Appended unsorted; sorted once when first looked up or saved.
        self.index.as_mut().expect("loaded").push((e.id, e.commit));
        self.index_sorted = false;
        self.index_dirty = true;
        self.summary.messages += 1;
        Ok(())
    }

    fn apply_mark(&mut self, e: &LoggedEvent, data: MarkData, key: Key) -> Result<()> {
        let dir = self.dir.clone();
        let mailbox = self.boxes.get_mut(dir.as_deref(), &e.event.actor)?;
        let marks = mailbox.marks.entry(key).or_default();
        match e.event.kind.as_str() {
            kinds::READ => {
                marks.read.get_or_insert_with(|| e.event.time.clone());
            }
            kinds::UNREAD => marks.read = None,
            kinds::TAG | kinds::UNTAG => {
                let Some(tag) = data
                    .tag
                    .filter(|t| crate::names::validate_name("tag", t).is_ok())
                else {
                    self.summary.skipped += 1;
                    return Ok(());
                };
                if e.event.kind == kinds::TAG {
                    marks.tags.insert(tag);
                } else {
                    marks.tags.remove(&tag);
                }
            }
            kinds::TRASH => marks.trashed = true,
            kinds::UNTRASH => marks.trashed = false,
            kinds::ARCHIVE => {
                marks.archived.get_or_insert_with(|| e.event.time.clone());
            }
            kinds::UNARCHIVE => marks.archived = None,
            _ => {}
        }
        if marks.is_empty() {
            mailbox.marks.remove(&key);
        }
        Ok(())
    }

    fn apply_claim(&mut self, e: &LoggedEvent, data: ClaimData, key: Key) -> Result<()> {
        let actor = &e.event.actor;
        let id = &key;
        let dir = self.dir.clone();
        let dir = dir.as_deref();
        let header = match self.boxes.get(dir, actor)?.and_then(|b| b.received.get(id)) {
            Some(r) => Some(r.h.clone()),
            None => self
                .boxes
                .get(dir, &BROADCAST.to_owned())?
                .and_then(|b| b.received.get(id))
                .filter(|r| r.h.from != *actor)
                .map(|r| r.h.clone()),
        };
        let Some(header) = header else {
            // Not a recipient, or the message is not (yet) known in the order: the claim does not count.
            self.summary.skipped += 1;
            return Ok(());
        };
        let meta = self.meta.get_mut(dir, &key.0[0])?.entry(key).or_default();
        let event = e.id.to_hex();
        if meta.claims.iter().any(|c| c.event == event) {
            return Ok(());
        }
        meta.claims.push(ClaimRecord {
            persona: actor.clone(),
            event,
            lock: data.lock,
        });
        let winner = meta.winner();
        if winner == header.claim {
            return Ok(());
        }
        let mut holders: Vec<String> = header.recipients().into_iter().collect();
        if header.is_broadcast() {
            holders.push(BROADCAST.to_owned());
        }
        for p in holders {
            if let Some(r) = self.boxes.get_mut(dir, &p)?.received.get_mut(id) {
                r.h.claim = winner.clone();
            }
        }
        Ok(())
    }

    fn try_apply(&mut self, e: &LoggedEvent) -> Result<()> {
        let kind = e.event.kind.as_str();
        if !kind.starts_with("mail.") {
            return Ok(());
        }
        if crate::names::validate_name("persona", &e.event.actor).is_err() {
            self.summary.skipped += 1;
            return Ok(());
        }
        match kind {
            kinds::SEND => match SendData::deserialize(&e.event.data) {
                Ok(d)
                    if d.to
                        .iter()
                        .chain(d.groups.values().flatten())
                        .all(|n| crate::names::validate_name("recipient", n).is_ok()) =>
                {
                    self.apply_send(e, d)
                }
                _ => {
                    self.summary.skipped += 1;
                    Ok(())
                }
            },
            kinds::CLAIM => match ClaimData::deserialize(&e.event.data) {
                Ok(d) if Key::parse(&d.message).is_some() => {
                    let key = Key::parse(&d.message).expect("checked");
                    self.apply_claim(e, d, key)
                }
                _ => {
                    self.summary.skipped += 1;
                    Ok(())
                }
            },
            k if kinds::ALL.contains(&k) => match MarkData::deserialize(&e.event.data) {
                Ok(d) if Key::parse(&d.message).is_some() => {
                    let key = Key::parse(&d.message).expect("checked");
                    self.apply_mark(e, d, key)
                }
                _ => {
                    self.summary.skipped += 1;
                    Ok(())
                }
            },
            _ => Ok(()),
        }
    }
}

fn keep(h: &Header, marks: &Marks, persona: &str, f: &Filter, now: DateTime<Utc>) -> bool {
    let folder_ok = match f.folder {
        Folder::All => true,
        Folder::Trash => marks.trashed,
        Folder::Archive => !marks.trashed && marks.archived.is_some(),
        Folder::Inbox => {
            !marks.trashed
                && marks.archived.is_none()
                && !h.is_expired(now)
                && h.claim.as_ref().is_none_or(|c| c.persona == persona)
        }
    };
    folder_ok
        && (!f.unread || marks.read.is_none())
        && f.msg_type.as_ref().is_none_or(|t| &h.msg_type == t)
        && f.priority.is_none_or(|p| h.priority == p)
        && f.from.as_ref().is_none_or(|s| &h.from == s)
        && f.tag
            .as_ref()
            .is_none_or(|t| h.tags.contains(t) || marks.tags.contains(t))
        && f.since
            .is_none_or(|since| super::when::parse_stored(&h.time).is_some_and(|t| t >= since))
}

fn bucket_of_key(key: &str) -> u8 {
    Sha256::digest(key.as_bytes())[0]
}

/// The smallest 32 bytes whose hex starts with `prefix` (`fill` pads odd lengths).
fn hex_bound(prefix: &str, fill: u8) -> [u8; 32] {
    let mut hex: Vec<u8> = prefix.bytes().take(64).collect();
    while hex.len() < 64 {
        hex.push(fill);
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).unwrap_or("00");
        out[i] = u8::from_str_radix(s, 16).unwrap_or(0);
    }
    out
}

/// `abbrev::unique_len` over sorted binary ids, without making 100,000 strings.
fn unique_len(sorted: &[(EventId, ObjectId)]) -> usize {
    let mut len = abbrev::DEFAULT_ABBREV;
    for pair in sorted.windows(2) {
        let (a, b) = (&pair[0].0 .0, &pair[1].0 .0);
        let byte = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let nibbles = if byte == 32 {
            64
        } else {
            2 * byte + usize::from(a[byte] >> 4 == b[byte] >> 4)
        };
        len = len.max(nibbles + 1);
    }
    len.min(64)
}

impl Projection for MailView {
    const NAME: &'static str = "mail";
    const VERSION: u32 = 3;

    fn empty() -> Self {
        let mut v = MailView::with_summary(None, Summary::default());
        v.fresh = true;
        v.index = Some(Vec::new());
        v
    }

    fn apply(&mut self, e: &LoggedEvent) {
        if self.broken.is_some() {
            return;
        }
        if let Err(err) = self.try_apply(e) {
            self.fail(err);
        }
    }

    fn save(&self, dir: &Path) -> std::io::Result<()> {
        if let Some(why) = &self.broken {
            return Err(std::io::Error::other(why.clone()));
        }
        let all = self.fresh;
        if all {
            for sub in ["boxes", "sent", "meta", "threads"] {
                match std::fs::remove_dir_all(dir.join(sub)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
        }
        self.boxes.save(dir, all)?;
        self.sent.save(dir, all)?;
        self.meta.save(dir, all)?;
        self.threads.save(dir, all)?;
        let mut summary = self.summary.clone();
        if all || self.index_dirty {
            let mut index = self.index.clone().unwrap_or_default();
            index.sort_unstable_by_key(|(id, _)| *id);
            let mut raw = Vec::with_capacity(index.len() * RECORD);
            for (id, commit) in &index {
                raw.extend_from_slice(&id.0);
                raw.extend_from_slice(commit.as_bytes());
            }
            write_atomically(&dir.join("index.bin"), &raw)?;
            summary.abbrev = unique_len(&index);
        }
        summary.boxes = self.boxes.present.clone();
        summary.sent = self.sent.present.clone();
        summary.meta = self.meta.present.clone();
        summary.threads = self.threads.present.clone();
        save_json(dir, "summary.json", &summary)
    }

    fn load(dir: &Path) -> Option<Self> {
        let summary: Summary = load_json(dir, "summary.json")?;
        Some(MailView::with_summary(Some(dir.to_owned()), summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eventlog::Event;

    fn ev(lamport: u64, kind: &str, actor: &str, data: serde_json::Value) -> LoggedEvent {
        let mut event = Event::new(kind, actor, data);
        event.nonce = Some(format!("{lamport}"));
        event.time = format!("2026-01-28T15:{:02}:00.000Z", lamport % 60);
        LoggedEvent {
            id: event.id().unwrap(),
            lamport,
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            event,
        }
    }

    fn send(lamport: u64, from: &str, to: &[&str], groups: serde_json::Value) -> LoggedEvent {
        ev(
            lamport,
            kinds::SEND,
            from,
            serde_json::json!({"to": to, "groups": groups, "subject": format!("s{lamport}"),
                               "body": "", "type": "task", "priority": "normal"}),
        )
    }

    fn fold(events: &[LoggedEvent]) -> MailView {
        let mut v = MailView::empty();
        for e in crate::eventlog::order(events.to_vec()) {
            v.apply(&e);
        }
        assert!(v.broken.is_none());
        v
    }

    #[test]
    fn claims_first_lock_wins_else_first_claim_and_only_recipients_count() {
        let m = send(
            1,
            "orch",
            &["workers"],
            serde_json::json!({"workers": ["w1", "w2"]}),
        );
        let id = m.id.to_hex();
        let claim = |l, who: &str, lock| {
            ev(
                l,
                kinds::CLAIM,
                who,
                serde_json::json!({"message": id, "lock": lock}),
            )
        };
        let now = Utc::now();
        // Provisional claims: the first in the order wins, whatever order they are folded in.
        let mut v = fold(&[claim(3, "w2", false), m.clone(), claim(2, "w1", false)]);
        assert_eq!(v.meta(&id).unwrap().winner().unwrap().persona, "w1");
        // A lock claim beats a provisional one that sorts before it; outsiders do not count.
        let mut v = fold(&[
            m.clone(),
            claim(2, "outsider", true),
            claim(3, "w1", false),
            claim(4, "w2", true),
        ]);
        assert_eq!(
            v.meta(&id).unwrap().winner(),
            Some(Claim {
                persona: "w2".into(),
                lock: true
            })
        );
        assert_eq!(v.skipped(), 1);
        // The loser's inbox no longer lists it; the winner's does.
        assert!(v.inbox("w1", &Filter::default(), now).unwrap().is_empty());
        assert_eq!(v.inbox("w2", &Filter::default(), now).unwrap().len(), 1);
        // A claim that comes before its message in the order does not count.
        let mut v = fold(&[
            ev(0, kinds::CLAIM, "w1", serde_json::json!({"message": id})),
            m,
        ]);
        assert_eq!(v.meta(&id).unwrap().winner(), None);
    }

    #[test]
    fn marks_are_per_persona_last_wins_and_threads_are_inherited() {
        let a = send(
            1,
            "weaver",
            &["curator", "__broadcast"],
            serde_json::json!({}),
        );
        let id = a.id.to_hex();
        let mark = |l, kind, who: &str| ev(l, kind, who, serde_json::json!({"message": id}));
        let reply = ev(
            5,
            kinds::SEND,
            "curator",
            serde_json::json!({"to": ["weaver"], "subject": "re", "body": "", "type": "response",
                               "priority": "normal", "in_reply_to": id}),
        );
        let mut v = fold(&[
            a,
            mark(2, kinds::READ, "curator"),
            mark(3, kinds::UNREAD, "curator"),
            mark(4, kinds::READ, "refactor"),
            reply.clone(),
            ev(
                6,
                kinds::READ,
                "x",
                serde_json::json!({"message": "not-an-id"}),
            ),
            ev(
                7,
                kinds::READ,
                "bad name",
                serde_json::json!({"message": id}),
            ),
        ]);
        let now = Utc::now();
        assert_eq!(v.marks("curator", &id).unwrap().read, None);
        assert!(v.marks("refactor", &id).unwrap().read.is_some());
        // The broadcast reaches everyone but its sender, and curator directly.
        let f = Filter {
            unread: true,
            ..Filter::default()
        };
        assert_eq!(v.inbox("curator", &f, now).unwrap().len(), 1);
        assert_eq!(v.inbox("curator", &f, now).unwrap()[0].via, None);
        assert!(v.inbox("refactor", &f, now).unwrap().is_empty());
        assert_eq!(v.inbox("anyone", &f, now).unwrap().len(), 1);
        assert_eq!(v.inbox("weaver", &f, now).unwrap().len(), 1);
        assert_eq!(v.thread_of(&reply.id.to_hex()).unwrap(), id);
        assert_eq!(v.thread(&id).unwrap(), vec![id.clone(), reply.id.to_hex()]);
        assert_eq!(v.skipped(), 2);
        assert_eq!(v.messages(), 2);
        assert_eq!(v.sent("curator").unwrap()[0].id, reply.id.to_hex());
    }

    #[test]
    fn saved_partitions_load_lazily_and_fold_on() {
        let dir = tempfile::tempdir().unwrap();
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        let b = send(2, "weaver", &["refactor"], serde_json::json!({}));
        let v = fold(&[a.clone(), b.clone()]);
        v.save(dir.path()).unwrap();
        let mut loaded = MailView::load(dir.path()).unwrap();
        assert_eq!(loaded.messages(), 2);
        assert!(
            loaded.boxes.loaded.is_empty(),
            "nothing read before it is asked for"
        );
        let read = ev(
            3,
            kinds::READ,
            "curator",
            serde_json::json!({"message": a.id.to_hex()}),
        );
        loaded.apply(&read);
        assert_eq!(
            loaded.boxes.loaded.len(),
            1,
            "only curator's box was touched"
        );
        loaded.save(dir.path()).unwrap();
        let mut again = MailView::load(dir.path()).unwrap();
        let now = Utc::now();
        assert!(again
            .marks("curator", &a.id.to_hex())
            .unwrap()
            .read
            .is_some());
        assert_eq!(
            again
                .inbox("refactor", &Filter::default(), now)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(again.resolve(&b.id.to_hex()[..10]).unwrap().0, b.id);
        assert_eq!(again.sent("weaver").unwrap().len(), 2);
        // A damaged partition is an error the caller can rebuild from, not a wrong answer.
        std::fs::write(dir.path().join("boxes/curator.json"), b"{").unwrap();
        let mut broken = MailView::load(dir.path()).unwrap();
        assert!(matches!(
            broken.marks("curator", &a.id.to_hex()),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn unique_len_counts_nibbles() {
        let c = ObjectId::null(gix::hash::Kind::Sha1);
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        a[0] = 0xab;
        b[0] = 0xab;
        a[4] = 0x10;
        b[4] = 0x1f;
        assert_eq!(unique_len(&[(EventId(a), c), (EventId(b), c)]), 10);
        assert_eq!(unique_len(&[(EventId(a), c)]), 7);
        assert_eq!(hex_bound("ab1", b'0')[..2], [0xab, 0x10]);
    }
}
