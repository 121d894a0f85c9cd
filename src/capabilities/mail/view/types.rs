//! What the mail views hand out: message keys, headers, marks, mailboxes, claims, listing filters.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::super::kinds::{with_message_fields, SendData};
use super::super::message::{Priority, BROADCAST};
use super::super::recipients;
use crate::store::eventlog::{EventId, PayloadRef};

fn is_false(b: &bool) -> bool {
    !*b
}

/// A message id as a map key in the cache: the crate's one 32-byte id type, written as hex, read without
/// allocating.
pub use crate::kit::id::Id32 as Key;

/// Who won the claim on a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub persona: String,
    /// Won through the remote lock (`claim --sync`), so it is final.
    pub lock: bool,
}

with_message_fields! {
    /// What the views show of a message without its body.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Header {
        pub id: String,
        pub lamport: u64,
        pub time: String,
        pub from: String,
        @message_fields,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub files: Vec<PayloadRef>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub claim: Option<Claim>,
    }
}

impl Header {
    pub fn from_send(
        id: &EventId,
        lamport: u64,
        event: &crate::store::eventlog::Event,
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
            .and_then(super::super::when::parse_stored)
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
    pub(super) fn is_empty(&self) -> bool {
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
