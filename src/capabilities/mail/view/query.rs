//! The queries: listings, look-ups and id resolution over the (lazily loaded) partitions.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use gix::ObjectId;
use sha2::{Digest, Sha256};

use super::super::message::BROADCAST;
use super::{
    Filter, Folder, Header, Item, Key, MailView, Mailbox, Marks, MessageMeta, Received, RECORD,
};
use crate::kit::abbrev;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::EventId;

impl MailView {
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

    pub(super) fn load_index(&mut self) -> Result<&mut Vec<(EventId, ObjectId)>> {
        if self.index.is_none() {
            let mut index = Vec::new();
            if let Some(dir) = &self.dir {
                let path = dir.join("index.bin");
                match crate::store::eventlog::cache::read_sealed(dir, "index.bin") {
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
    /// The stamp of the tips this view's cache was folded at (its `meta.json`); `None` for a view built in
    /// memory. Derived data keyed by it is valid exactly as long as this view.
    pub fn stamp(&self) -> Option<String> {
        let dir = self.dir.as_deref()?;
        crate::store::eventlog::cache::read_sealed_stamp(dir, crate::store::eventlog::cache::META)
            .ok()
            .map(|(_, stamp)| stamp)
    }

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
                Err(_) => Err(Error::not_found(crate::kit::error::Thing::Message, prefix)),
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
        let full = abbrev::resolve(crate::kit::error::Thing::Message, prefix, &window)?;
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
        self.inbox_map(persona, f, now, |h, via, marks| Item {
            header: h.clone(),
            via: via.cloned(),
            marks: marks.clone(),
        })
    }

    /// [`MailView::inbox`], each listed message handed to `map` borrowed (header, the group it came
    /// through, the persona's marks): a caller that turns it into something else clones nothing twice.
    pub fn inbox_map<T>(
        &mut self,
        persona: &str,
        f: &Filter,
        now: DateTime<Utc>,
        mut map: impl FnMut(&Header, Option<&String>, &Marks) -> T,
    ) -> Result<Vec<T>> {
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
            .map(|(r, m)| map(&r.h, r.via.as_ref(), m))
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

    /// The newest `n` messages whose sender tagged them `tag`, newest first (by lamport, then id, as
    /// [`Self::all_headers`] orders them): read from the `tagged` partition and the holders' mailboxes, not
    /// from every header.
    pub fn tagged(&mut self, tag: &str, n: usize) -> Result<Vec<Header>> {
        let dir = self.dir.clone();
        let mut list: Vec<(u64, Key, String)> = self
            .tagged
            .get(dir.as_deref(), &bucket_of_key(tag))?
            .and_then(|m| m.get(tag))
            .map(|m| {
                m.iter()
                    .map(|(k, at)| (at.lamport, *k, at.holder.clone()))
                    .collect()
            })
            .unwrap_or_default();
        list.sort_by_key(|t| std::cmp::Reverse((t.0, t.1)));
        list.truncate(n);
        let mut out = Vec::with_capacity(list.len());
        for (_, key, holder) in list {
            out.extend(self.held(&holder, &key)?);
        }
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
}

pub(super) fn keep(
    h: &Header,
    marks: &Marks,
    persona: &str,
    f: &Filter,
    now: DateTime<Utc>,
) -> bool {
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
        && f.since.is_none_or(|since| {
            super::super::when::parse_stored(&h.time).is_some_and(|t| t >= since)
        })
}

pub(super) fn bucket_of_key(key: &str) -> u8 {
    Sha256::digest(key.as_bytes())[0]
}

/// The smallest 32 bytes whose hex starts with `prefix` (`fill` pads odd lengths).
pub(super) fn hex_bound(prefix: &str, fill: u8) -> [u8; 32] {
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
pub(super) fn unique_len(sorted: &[(EventId, ObjectId)]) -> usize {
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
