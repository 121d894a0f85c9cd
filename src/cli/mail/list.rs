//! `git jules mail inbox` and `git jules mail sent`.

use std::fmt::Write as _;

use git_jules::mail::view::{Filter, Folder, Item};
use git_jules::mail::{api, ops, out, when, Priority};

use super::{short_time, PersonaArg};
use crate::cli::context::Context;

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
    if ctx.ui.json {
        let listing = api::inbox(&ctx.workspace_of(repo.clone()), &persona, &filter)?;
        super::warn_unknown(&ctx.ui, &listing.warnings);
        ctx.ui.json(&listing);
        return Ok(0);
    }
    // The human listing wants the items themselves (marks, via, expiry) and their signatures.
    let persona = a.persona.checked(ctx, repo)?;
    let log = ops::log(repo)?;
    let (items, abbrev, sigs) = ops::with_view(&log, |view| {
        let mut items = view.inbox(&persona, &filter, now)?;
        let ids: Vec<&str> = items.iter().map(|i| i.header.id.as_str()).collect();
        let mut sigs = out::signatures(repo, view, &ids)?;
        // Under jules.requireSigned what is not verified is not listed (as `--json` does).
        if let Some(states) = sigs
            .as_mut()
            .filter(|_| git_jules::sign::verify::require_signed(repo))
        {
            let keep: Vec<bool> = states
                .iter()
                .map(|s| s.as_ref().is_some_and(|s| s.is_verified()))
                .collect();
            let mut k = keep.iter();
            items.retain(|_| *k.next().unwrap_or(&false));
            states.retain(|s| s.as_ref().is_some_and(|s| s.is_verified()));
        }
        Ok((items, view.abbrev()?, sigs))
    })?;
    print_items(ctx, &persona, &items, abbrev, now, sigs.as_deref());
    Ok(0)
}

pub fn print_items(
    ctx: &Context,
    persona: &str,
    items: &[Item],
    abbrev: usize,
    now: chrono::DateTime<chrono::Utc>,
    signatures: Option<&[Option<git_jules::sign::State>]>,
) {
    if ctx.ui.json {
        ctx.ui.json(&out::listing(persona, items, abbrev, now));
        return;
    }
    // One write for the whole listing: thousands of lines, one system call each, cost more than the rest.
    let mut text = String::new();
    for (n, i) in items.iter().enumerate() {
        let h = &i.header;
        let flag = if i.marks.read.is_none() { "*" } else { " " };
        let mut extra = String::new();
        // Names, tags and subjects come from senders (or a replica's log): escaped on a terminal, so a
        // right-to-left override cannot turn the `(NOT VERIFIED …)` after them around.
        let t = |s: &str| ctx.ui.text(s).into_owned();
        if let Some(v) = &i.via {
            extra.push_str(&format!("  (via {})", t(v)));
        }
        let mut tags: Vec<&str> = h.tags.iter().map(String::as_str).collect();
        tags.extend(i.marks.tags.iter().map(String::as_str));
        if !tags.is_empty() {
            extra.push_str(&format!("  [{}]", t(&tags.join(", "))));
        }
        if let Some(c) = &h.claim {
            extra.push_str(&format!("  claimed by {}", t(&c.persona)));
        }
        if h.is_expired(now) {
            extra.push_str("  (expired)");
        }
        // Only a repository with trust roots verifies; there, what is not verified says so.
        if let Some(Some(state)) = signatures.and_then(|s| s.get(n)) {
            if !state.is_verified() {
                extra.push_str(&format!("  (NOT VERIFIED: {})", t(&state.describe())));
            }
        }
        let prio = match h.priority {
            Priority::Urgent => ctx.ui.red("urgent"),
            p => p.to_string(),
        };
        let _ = writeln!(
            text,
            "{flag} {}  {}  {:<6}  {:<9} {:<16} {}{}",
            ctx.ui.yellow(&h.id[..abbrev]),
            short_time(&h.time),
            prio,
            t(&h.msg_type),
            t(&h.from),
            t(&h.subject),
            ctx.ui.dim(&extra)
        );
    }
    if !text.is_empty() {
        ctx.ui.out(text.trim_end_matches('\n'));
    }
}

pub fn sent(ctx: &Context, repo: &gix::Repository, a: SentArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    if ctx.ui.json {
        let listing = api::sent(&ctx.workspace_of(repo.clone()), &persona, a.limit)?;
        super::warn_unknown(&ctx.ui, &listing.warnings);
        ctx.ui.json(&listing);
        return Ok(0);
    }
    let persona = a.persona.checked(ctx, repo)?;
    let log = ops::log(repo)?;
    // The headers and their signatures, as `--json` has them: what is not verified is marked, and under
    // jules.requireSigned (where the fold already left unverified mail out) dropped.
    let (headers, abbrev, sigs) = ops::with_view(&log, |view| {
        let mut headers = view.sent(&persona)?;
        if let Some(l) = a.limit {
            headers.truncate(l);
        }
        let ids: Vec<&str> = headers.iter().map(|h| h.id.as_str()).collect();
        let mut sigs = out::signatures(repo, view, &ids)?;
        if let Some(states) = sigs
            .as_mut()
            .filter(|_| git_jules::sign::verify::require_signed(repo))
        {
            let mut keep = states
                .iter()
                .map(|s| s.as_ref().is_some_and(|s| s.is_verified()));
            headers.retain(|_| keep.next().unwrap_or(false));
            states.retain(|s| s.as_ref().is_some_and(|s| s.is_verified()));
        }
        Ok((headers, view.abbrev()?, sigs))
    })?;
    let mut text = String::new();
    for (n, h) in headers.iter().enumerate() {
        let mut claim = h
            .claim
            .as_ref()
            .map(|c| format!("  claimed by {}", ctx.ui.text(&c.persona)))
            .unwrap_or_default();
        if let Some(Some(state)) = sigs.as_deref().and_then(|s| s.get(n)) {
            if !state.is_verified() {
                claim.push_str(&format!("  (NOT VERIFIED: {})", state.describe()));
            }
        }
        let _ = writeln!(
            text,
            "{}  {}  {:<9} to {:<16} {}{}",
            ctx.ui.yellow(&h.id[..abbrev]),
            short_time(&h.time),
            ctx.ui.text(&h.msg_type),
            ctx.ui.text(&h.to.join(",")),
            ctx.ui.text(&h.subject),
            ctx.ui.dim(&claim)
        );
    }
    if !text.is_empty() {
        ctx.ui.out(text.trim_end_matches('\n'));
    }
    Ok(0)
}
