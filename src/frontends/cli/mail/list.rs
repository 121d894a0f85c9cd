//! `git jules mail inbox` and `git jules mail sent`.

use std::fmt::Write as _;
use std::io::Write;

use git_jules::capabilities::mail::api::{self, Listing, MessageOut};
use git_jules::capabilities::mail::view::{Filter, Folder};
use git_jules::capabilities::mail::{when, Priority};

use super::{short_time, PersonaArg};
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct InboxArgs {
    #[command(flatten)]
    pub persona: PersonaArg,
    /// Only unread messages
    #[arg(long)]
    pub unread: bool,
    /// Only messages of this type
    #[arg(long = "type", value_name = "TYPE")]
    pub msg_type: Option<String>,
    #[arg(long, value_parser = ["urgent", "normal", "low"], value_name = "PRIORITY")]
    pub priority: Option<String>,
    /// Only messages with this tag (the sender's or the persona's own)
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,
    /// Only messages from this sender
    #[arg(long, value_name = "PERSONA")]
    pub from: Option<String>,
    /// Only messages sent at or after WHEN: a duration ago (2h, 3d) or a time
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most N messages
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// The archive instead of the inbox
    #[arg(long, conflicts_with_all = ["trash", "all"])]
    pub archived: bool,
    /// The trash instead of the inbox
    #[arg(long, conflicts_with = "all")]
    pub trash: bool,
    /// Everything received: archived, trashed, expired and claimed by others included
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, clap::Args)]
pub struct SentArgs {
    #[command(flatten)]
    pub persona: PersonaArg,
    /// At most N messages
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub fn inbox(ctx: &Context, repo: &gix::Repository, a: InboxArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    let now = chrono::Utc::now();
    let filter = Filter {
        folder: if a.all {
            Folder::All
        } else if a.trash {
            Folder::Trash
        } else if a.archived {
            Folder::Archive
        } else {
            Folder::Inbox
        },
        unread: a.unread,
        msg_type: a.msg_type.clone(),
        priority: a.priority.as_deref().map(Priority::parse).transpose()?,
        tag: a.tag.clone(),
        from: a.from.clone(),
        since: a
            .since
            .as_deref()
            .map(|s| when::parse_when(s, now, when::Direction::Past))
            .transpose()?,
        limit: a.limit,
    };
    // One use case for both outputs (and for the MCP server and the web view): the human listing shows
    // the same messages, states and signatures as `--json`.
    let listing = api::inbox(&ctx.workspace_of(repo.clone()), &persona, &filter)?;
    ctx.ui.print(&Inbox(&listing));
    Ok(0)
}

/// `mail inbox` (and `mail wait`'s answer): the listing, names nobody knows as warnings.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Inbox<'a>(pub &'a Listing);

impl Print for Inbox<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        write_messages(out, style, &self.0.list.messages)
    }

    fn warnings(&self) -> Vec<String> {
        self.0.warnings.iter().map(ToString::to_string).collect()
    }
}

/// `text` written whole (one system call for thousands of lines), ending in one newline.
fn write_lines(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    out.write_all(text.trim_end_matches('\n').as_bytes())?;
    out.write_all(b"\n")
}

/// A mailbox listing, one line per message: `*` marks unread; what is not verified says so.
fn write_messages(
    out: &mut dyn Write,
    style: &Style,
    messages: &[MessageOut],
) -> std::io::Result<()> {
    // One write for the whole listing: thousands of lines, one system call each, cost more than the rest.
    let mut text = String::new();
    for m in messages {
        let unread = m.state.as_ref().is_some_and(|s| s.unread);
        let flag = if unread { "*" } else { " " };
        let mut extra = String::new();
        // Names, tags and subjects come from senders (or a replica's log): escaped on a terminal, so a
        // right-to-left override cannot turn the `(NOT VERIFIED …)` after them around.
        let t = |s: &str| style.text(s).into_owned();
        if let Some(v) = &m.via {
            extra.push_str(&format!("  (via {})", t(v)));
        }
        let mut tags: Vec<&str> = m.tags.iter().map(String::as_str).collect();
        if let Some(s) = &m.state {
            tags.extend(s.tags.iter().map(String::as_str));
        }
        if !tags.is_empty() {
            extra.push_str(&format!("  [{}]", t(&tags.join(", "))));
        }
        if let Some(c) = &m.claim {
            extra.push_str(&format!("  claimed by {}", t(&c.persona)));
        }
        if m.expired {
            extra.push_str("  (expired)");
        }
        // Only a repository with trust roots verifies; there, what is not verified says so.
        if let Some(state) = &m.signature {
            if !state.is_verified() {
                extra.push_str(&format!("  (NOT VERIFIED: {})", t(&state.describe())));
            }
        }
        let prio = match m.priority.as_str() {
            "urgent" => style.red("urgent"),
            p => p.to_owned(),
        };
        let _ = writeln!(
            text,
            "{flag} {}  {}  {:<6}  {:<9} {:<16} {}{}",
            style.yellow(&m.short),
            short_time(&m.time),
            prio,
            t(&m.msg_type),
            t(&m.from),
            t(&m.subject),
            style.dim(&extra)
        );
    }
    write_lines(out, &text)
}

pub fn sent(ctx: &Context, repo: &gix::Repository, a: SentArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    // The use case `--json` prints: what is not verified is marked, and under jules.requireSigned dropped.
    let listing = api::sent(&ctx.workspace_of(repo.clone()), &persona, a.limit)?;
    ctx.ui.print(&Sent(&listing));
    Ok(0)
}

/// `mail sent`: one line a message sent, its recipients and claim; names nobody knows as warnings.
#[derive(Serialize)]
#[serde(transparent)]
struct Sent<'a>(&'a Listing);

impl Print for Sent<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let mut text = String::new();
        for h in &self.0.list.messages {
            let mut claim = h
                .claim
                .as_ref()
                .map(|c| format!("  claimed by {}", style.text(&c.persona)))
                .unwrap_or_default();
            if let Some(state) = &h.signature {
                if !state.is_verified() {
                    claim.push_str(&format!("  (NOT VERIFIED: {})", state.describe()));
                }
            }
            let _ = writeln!(
                text,
                "{}  {}  {:<9} to {:<16} {}{}",
                style.yellow(&h.short),
                short_time(&h.time),
                style.text(&h.msg_type),
                style.text(&h.to.join(",")),
                style.text(&h.subject),
                style.dim(&claim)
            );
        }
        write_lines(out, &text)
    }

    fn warnings(&self) -> Vec<String> {
        self.0.warnings.iter().map(ToString::to_string).collect()
    }
}
