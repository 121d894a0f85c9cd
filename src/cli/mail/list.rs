//! `git jules mail inbox` and `git jules mail sent`.

use std::fmt::Write as _;

use git_jules::mail::api::{self, MessageOut};
use git_jules::mail::view::{Filter, Folder};
use git_jules::mail::{when, Priority};

use super::{short_time, PersonaArg};
use crate::cli::context::Context;
use crate::cli::ui;

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
    super::warn_unknown(&listing.warnings);
    if ctx.ui.json {
        ui::json(&listing);
        return Ok(0);
    }
    print_messages(ctx, &listing.list.messages);
    Ok(0)
}

/// A mailbox listing, one line per message: `*` marks unread; what is not verified says so.
pub fn print_messages(ctx: &Context, messages: &[MessageOut]) {
    // One write for the whole listing: thousands of lines, one system call each, cost more than the rest.
    let mut text = String::new();
    for m in messages {
        let unread = m.state.as_ref().is_some_and(|s| s.unread);
        let flag = if unread { "*" } else { " " };
        let mut extra = String::new();
        // Names, tags and subjects come from senders (or a replica's log): escaped on a terminal, so a
        // right-to-left override cannot turn the `(NOT VERIFIED …)` after them around.
        let t = |s: &str| ctx.ui.text(s).into_owned();
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
            "urgent" => ctx.ui.red("urgent"),
            p => p.to_owned(),
        };
        let _ = writeln!(
            text,
            "{flag} {}  {}  {:<6}  {:<9} {:<16} {}{}",
            ctx.ui.yellow(&m.short),
            short_time(&m.time),
            prio,
            t(&m.msg_type),
            t(&m.from),
            t(&m.subject),
            ctx.ui.dim(&extra)
        );
    }
    if !text.is_empty() {
        ui::out(text.trim_end_matches('\n'));
    }
}

pub fn sent(ctx: &Context, repo: &gix::Repository, a: SentArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    // The use case `--json` prints: what is not verified is marked, and under jules.requireSigned dropped.
    let listing = api::sent(&ctx.workspace_of(repo.clone()), &persona, a.limit)?;
    super::warn_unknown(&listing.warnings);
    if ctx.ui.json {
        ui::json(&listing);
        return Ok(0);
    }
    let mut text = String::new();
    for h in &listing.list.messages {
        let mut claim = h
            .claim
            .as_ref()
            .map(|c| format!("  claimed by {}", ctx.ui.text(&c.persona)))
            .unwrap_or_default();
        if let Some(state) = &h.signature {
            if !state.is_verified() {
                claim.push_str(&format!("  (NOT VERIFIED: {})", state.describe()));
            }
        }
        let _ = writeln!(
            text,
            "{}  {}  {:<9} to {:<16} {}{}",
            ctx.ui.yellow(&h.short),
            short_time(&h.time),
            ctx.ui.text(&h.msg_type),
            ctx.ui.text(&h.to.join(",")),
            ctx.ui.text(&h.subject),
            ctx.ui.dim(&claim)
        );
    }
    if !text.is_empty() {
        ui::out(text.trim_end_matches('\n'));
    }
    Ok(0)
}
