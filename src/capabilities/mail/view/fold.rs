//! The fold: how each mail event changes the mailboxes (the rules are in the module above).

use serde::Deserialize;

use super::super::kinds::{self, ClaimData, MarkData, SendData};
use super::super::message::BROADCAST;
use super::query::bucket_of_key;
use super::{ClaimRecord, Header, Key, MailView, Received, TaggedAt};
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{EventId, LoggedEvent};

impl MailView {
    pub(super) fn fail(&mut self, e: Error) {
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
        for tag in &header.tags {
            self.tagged
                .get_mut(dir, &bucket_of_key(tag))?
                .entry(tag.clone())
                .or_default()
                .insert(
                    key,
                    TaggedAt {
                        lamport: header.lamport,
                        holder: holder.clone(),
                    },
                );
        }
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
                    .filter(|t| crate::kit::names::validate_name("tag", t).is_ok())
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

    pub(super) fn try_apply(&mut self, e: &LoggedEvent) -> Result<()> {
        let kind = e.event.kind.as_str();
        if !kind.starts_with("mail.") {
            return Ok(());
        }
        if crate::kit::names::validate_name("persona", &e.event.actor).is_err() {
            self.summary.skipped += 1;
            return Ok(());
        }
        match kind {
            kinds::SEND => match SendData::deserialize(&e.event.data) {
                Ok(d)
                    if d.to
                        .iter()
                        .chain(d.groups.values().flatten())
                        .all(|n| crate::kit::names::validate_name("recipient", n).is_ok()) =>
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
