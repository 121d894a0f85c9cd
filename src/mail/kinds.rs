//! The mail event kinds and the JSON of their `data`.
//!
//! | kind | actor | data |
//! |---|---|---|
//! | `mail.send` | the sender | [`SendData`]; file attachments ride as the event's payload |
//! | `mail.read`, `mail.unread` | the reader | [`MarkData`] |
//! | `mail.tag`, `mail.untag` | the persona tagging | [`MarkData`] with `tag` |
//! | `mail.trash`, `mail.untrash`, `mail.archive`, `mail.unarchive` | the mailbox owner | [`MarkData`] |
//! | `mail.claim` | the claimant | [`ClaimData`] |
//!
//! Readers ignore data fields they do not know, so later versions may add optional fields. A `mail.*`
//! event whose data does not decode is skipped by the projection (and counted), never fatal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::message::Priority;

pub const SEND: &str = "mail.send";
pub const READ: &str = "mail.read";
pub const UNREAD: &str = "mail.unread";
pub const TAG: &str = "mail.tag";
pub const UNTAG: &str = "mail.untag";
pub const TRASH: &str = "mail.trash";
pub const UNTRASH: &str = "mail.untrash";
pub const ARCHIVE: &str = "mail.archive";
pub const UNARCHIVE: &str = "mail.unarchive";
pub const CLAIM: &str = "mail.claim";

/// Every kind this module writes.
pub const ALL: &[&str] = &[
    SEND, READ, UNREAD, TAG, UNTAG, TRASH, UNTRASH, ARCHIVE, UNARCHIVE, CLAIM,
];

fn is_false(b: &bool) -> bool {
    !*b
}

/// The data of `mail.send`. The sender is the event's actor and the send time is the event's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendData {
    /// The recipients as the sender wrote them: personas, group names, `__broadcast`.
    pub to: Vec<String>,
    /// The members of each group among `to`, as resolved when the message was sent, so that every replica
    /// delivers the message to the same personas whatever its own configuration says.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, Vec<String>>,
    pub subject: String,
    pub body: String,
    #[serde(rename = "type")]
    pub msg_type: String,
    pub priority: Priority,
    /// Tags the sender put on the message (each recipient may add its own with `mail.tag`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub needs_response: bool,
    /// The message answered: its full id, or, for imported maildir messages whose parent was not found,
    /// the file name the source gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// The conversation: a message id (the thread's first message) or a free thread name. Absent: a reply
    /// joins its parent's thread, anything else starts its own (named by its own id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// After this time the message drops out of the views (it stays in the log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Attachments that are links, kept as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    /// Frontmatter fields of an imported maildir message that mail does not know, kept verbatim.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Where an imported message came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// Provenance of an imported event, which also keeps distinct source events distinct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `jsonl` (seed-000 `events.jsonl`).
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<i64>,
}

/// The data of the per-persona marks: read, unread, tag, untag, trash, untrash, archive, unarchive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkData {
    /// The message's full id.
    pub message: String,
    /// Only for `mail.tag` and `mail.untag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

/// The data of `mail.claim`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimData {
    pub message: String,
    /// The claim was published with `claim --sync`: pushed to the remote as a fast-forward onto a state
    /// that held no claim on the message. At most one such claim exists per message; it wins.
    #[serde(default, skip_serializing_if = "is_false")]
    pub lock: bool,
}
