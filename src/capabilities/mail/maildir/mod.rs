//! Seed 003's maildir: the layout (mailboxes, their folders, file names) shared by [`import`] and [`export`].

pub mod export;
pub mod import;

use crate::capabilities::mail::kinds::SendData;
use crate::capabilities::mail::when;
use crate::store::eventlog::LoggedEvent;

/// The folder of a mailbox a message file sits in: the mailbox root (unread), `read/` or `archive/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Folder {
    Unread,
    Read,
    Archived,
}

impl Folder {
    pub fn subdir(&self) -> Option<&'static str> {
        match self {
            Folder::Unread => None,
            Folder::Read => Some("read"),
            Folder::Archived => Some("archive"),
        }
    }
}

/// `{timestamp}_{from}_{type}`, the seed-003 name of a message without its extension.
pub fn base_name(e: &LoggedEvent, d: &SendData) -> String {
    let stamp = when::parse_stored(&e.event.time)
        .map(when::compact)
        .unwrap_or_else(|| e.event.time.replace([':', '-', '.'], ""));
    format!("{stamp}_{}_{}", e.event.actor, d.msg_type)
}

pub(super) fn time_field(stored: &str) -> String {
    when::parse_stored(stored)
        .map(when::frontmatter_time)
        .unwrap_or_else(|| stored.to_owned())
}
