//! What an agent is told at session start: its mailbox at a glance (unread, urgent and needs-response
//! counts, the newest subjects), then the mailbox preamble `git jules prompt` prints (seed 000's "check your
//! mailbox first"), so that a harness session begins where a scheduled run would.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::clean;
use crate::capabilities::mail;
use crate::kit::error::Result;

/// How many of the newest unread messages are named.
pub const NEWEST: usize = 5;

/// The counts of a persona's unread mail.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Mailbox {
    pub persona: String,
    pub unread: usize,
    pub urgent: usize,
    pub needs_response: usize,
    /// The newest unread messages, newest first (at most [`NEWEST`]).
    pub newest: Vec<mail::view::Header>,
}

/// Count `persona`'s unread mail at `now`.
pub fn mailbox(repo: &gix::Repository, persona: &str, now: DateTime<Utc>) -> Result<Mailbox> {
    mail::message::validate_persona(persona)?;
    let mut unread = mail::api::unread_headers(repo, persona, now)?;
    unread.sort_by(|a, b| b.lamport.cmp(&a.lamport).then_with(|| b.id.cmp(&a.id)));
    Ok(Mailbox {
        persona: persona.to_owned(),
        unread: unread.len(),
        urgent: unread
            .iter()
            .filter(|h| h.priority == mail::message::Priority::Urgent)
            .count(),
        needs_response: unread.iter().filter(|h| h.needs_response).count(),
        newest: unread.into_iter().take(NEWEST).collect(),
    })
}

/// The context text: one line of counts, then the preamble over the newest messages. Subjects and senders
/// are other personas' text: cleaned of control characters before a model reads them.
pub fn context(m: &Mailbox) -> String {
    let mut head = format!(
        "git-jules mailbox of {}: {} unread, {} urgent, {} needing a response.",
        m.persona, m.unread, m.urgent, m.needs_response
    );
    if m.unread > m.newest.len() {
        head.push_str(&format!(" The {} newest:", m.newest.len()));
    }
    let newest: Vec<mail::view::Header> = m
        .newest
        .iter()
        .map(|h| {
            let mut h = h.clone();
            h.subject = clean(&h.subject, 200);
            h.from = clean(&h.from, 64);
            h.msg_type = clean(&h.msg_type, 32);
            h
        })
        .collect();
    format!(
        "{head}\n\n{}",
        crate::capabilities::prompt::preamble(&m.persona, &newest).trim_end()
    )
}
