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

/// Declares a struct with the fields a message carries both on the log ([`SendData`]) and in the views
/// ([`super::view::Header`]), placed where `@message_fields,` stands, so the two cannot drift apart. A macro
/// rather than `#[serde(flatten)]`: flatten buffers every field through serde's `Content` on the way in,
/// which made reading the mail cache 1.2-1.7x slower (measured when this was written); the macro costs
/// nothing at run time and keeps both JSON shapes (the event's canonical form and `--json`) unchanged.
macro_rules! with_message_fields {
    (
        $(#[$struct_meta:meta])*
        pub struct $name:ident {
            $( $(#[$before_meta:meta])* pub $before:ident : $before_ty:ty, )*
            @message_fields,
            $( $(#[$after_meta:meta])* pub $after:ident : $after_ty:ty, )*
        }
    ) => {
        $(#[$struct_meta])*
        pub struct $name {
            $( $(#[$before_meta])* pub $before: $before_ty, )*
            /// The recipients as the sender wrote them: personas, group names, `__broadcast`.
            pub to: Vec<String>,
            /// The members of each group among `to`, as resolved when the message was sent, so that every
            /// replica delivers the message to the same personas whatever its own configuration says.
            #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
            pub groups: std::collections::BTreeMap<String, Vec<String>>,
            pub subject: String,
            #[serde(rename = "type")]
            pub msg_type: String,
            pub priority: $crate::capabilities::mail::message::Priority,
            /// Tags the sender put on the message (each recipient may add its own with `mail.tag`).
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tags: Vec<String>,
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            pub needs_response: bool,
            /// The message answered: its full id, or, for imported maildir messages whose parent was not
            /// found, the file name the source gave.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub in_reply_to: Option<String>,
            /// The conversation: a message id (the thread's first message) or a free thread name. On the
            /// log, absent means that a reply joins its parent's thread and anything else starts its own;
            /// in the views, absent means the thread is named by the message's own id.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub thread: Option<String>,
            /// After this time the message drops out of the views (it stays in the log).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub expires: Option<String>,
            /// Attachments that are links, kept as given.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub urls: Vec<String>,
            $( $(#[$after_meta])* pub $after: $after_ty, )*
        }
    };
}
pub(crate) use with_message_fields;

with_message_fields! {
    /// The data of `mail.send`. The sender is the event's actor and the send time is the event's time.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct SendData {
        @message_fields,
        pub body: String,
        /// Frontmatter fields of an imported maildir message that mail does not know, kept verbatim.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pub headers: BTreeMap<String, String>,
        /// Where an imported message came from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<Source>,
    }
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
