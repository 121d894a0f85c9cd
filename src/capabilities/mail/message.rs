//! What a message is made of, its limits, and the checks a new message passes before anything is written.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::kit::error::{Error, Result};
use crate::kit::names;

/// The message types of the seed formats, plus `conflict` for the integrator's conflict reports.
pub const TYPES: &[&str] = &[
    "status", "alert", "task", "question", "response", "report", "handoff", "conflict",
];

/// The longest subject, in bytes.
pub const MAX_SUBJECT_BYTES: usize = 512;
/// The longest body, in bytes (the encoded event must also stay under the log's 256 KiB).
pub const MAX_BODY_BYTES: usize = 128 * 1024;
/// The largest file attachment.
pub const MAX_ATTACHMENT_BYTES: usize = 8 * 1024 * 1024;
pub const MAX_ATTACHMENTS: usize = 32;
pub const MAX_RECIPIENTS: usize = 64;
pub const MAX_TAGS: usize = 32;
/// The longest link attachment, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// The recipient that means every persona.
pub const BROADCAST: &str = "__broadcast";

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Urgent,
    #[default]
    Normal,
    Low,
}

impl Priority {
    pub fn as_str(&self) -> &'static str {
        match self {
            Priority::Urgent => "urgent",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "urgent" => Ok(Priority::Urgent),
            "normal" => Ok(Priority::Normal),
            "low" => Ok(Priority::Low),
            _ => Err(Error::usage(format!(
                "unknown priority {s:?}: use urgent, normal or low"
            ))),
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A message to send, as the caller gives it. Sending (`ops::build_send`, behind [`super::api`]) checks
/// it and resolves the recipients.
#[derive(Debug, Clone, Default)]
pub struct SendRequest {
    pub from: String,
    pub to: Vec<String>,
    pub subject: String,
    pub body: String,
    pub msg_type: String,
    pub priority: Priority,
    pub tags: Vec<String>,
    pub needs_response: bool,
    /// The full id of the message answered.
    pub in_reply_to: Option<String>,
    /// A thread key: a full message id or a thread name.
    pub thread: Option<String>,
    /// Stored form (see [`super::when::format_event_time`]).
    pub expires: Option<String>,
    pub urls: Vec<String>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// A persona acting (sender, reader, claimant): a valid name, and not the broadcast address.
pub fn validate_persona(name: &str) -> Result<()> {
    names::validate_name("persona", name)?;
    if name == BROADCAST {
        return Err(Error::usage(format!(
            "{BROADCAST} is a recipient, not a persona"
        )));
    }
    Ok(())
}

pub fn validate_type(t: &str) -> Result<()> {
    if TYPES.contains(&t) {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "unknown message type {t:?}: use one of {}",
            TYPES.join(", ")
        )))
    }
}

pub fn validate_subject(s: &str) -> Result<()> {
    if s.trim().is_empty() {
        return Err(Error::usage("the subject is empty"));
    }
    if s.len() > MAX_SUBJECT_BYTES {
        return Err(Error::usage(format!(
            "the subject is {} bytes, over the limit of {MAX_SUBJECT_BYTES}",
            s.len()
        )));
    }
    if s.chars().any(|c| c.is_control()) {
        return Err(Error::usage(
            "the subject must be one line without control characters",
        ));
    }
    Ok(())
}

pub fn validate_body(b: &str) -> Result<()> {
    if b.len() > MAX_BODY_BYTES {
        return Err(Error::usage(format!(
            "the body is {} bytes, over the limit of {MAX_BODY_BYTES} bytes (128 KiB); attach large content as a file",
            b.len()
        )));
    }
    Ok(())
}

pub fn validate_url(u: &str) -> Result<()> {
    if u.len() > MAX_URL_BYTES || u.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::usage(format!(
            "invalid link attachment {u:?}: at most {MAX_URL_BYTES} bytes, no spaces or control characters"
        )));
    }
    Ok(())
}

/// Whether an `--attach` value is a link (kept as a string) rather than a file to store.
pub fn is_url(s: &str) -> bool {
    match s.split_once("://") {
        Some((scheme, rest)) => {
            !scheme.is_empty()
                && !rest.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Bytes from a file or stdin that must be text.
pub fn utf8(bytes: Vec<u8>, what: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        Error::usage(format!(
            "{what} is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// A subject for a reply: `Re: ` once.
pub fn reply_subject(original: &str) -> String {
    if original.len() >= 3 && original[..3].eq_ignore_ascii_case("re:") {
        original.to_owned()
    } else {
        format!("Re: {original}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        assert!(validate_subject("  ").is_err());
        assert!(validate_subject("two\nlines").is_err());
        validate_subject("Conflict in PR #102").unwrap();
        assert!(validate_body(&"x".repeat(MAX_BODY_BYTES + 1)).is_err());
        assert!(validate_persona(BROADCAST).is_err());
        assert!(validate_persona("wörker").is_err());
        assert!(validate_type("memo").is_err());
        assert!(is_url("https://github.com/o/r/pull/1.patch"));
        assert!(!is_url("patches/fix.patch"));
        assert!(!is_url("://x"));
        assert_eq!(reply_subject("RE: x"), "RE: x");
        assert_eq!(reply_subject("x"), "Re: x");
        assert!(utf8(vec![b'a', 0xff], "the body").is_err());
        assert_eq!(Priority::parse("urgent").unwrap(), Priority::Urgent);
        assert!(Priority::Urgent < Priority::Normal);
    }
}
