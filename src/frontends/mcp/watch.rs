//! New-mail notification for `git jules mcp`, woken by `git_jules::kit::refwatch` on the repository's refs.
//!
//! Every way mail reaches a clone moves a ref: a local send or sync moves `refs/jules/…`, a plain
//! `git fetch` moves `refs/remotes/<remote>/jules/…` or rewrites `packed-refs`. The watcher wakes on any
//! such change, waits a moment for the burst to settle, computes the persona's unread messages through the
//! library (the same query as `mail inbox --unread`), and tells the subscribed clients when a message
//! appeared that was not unread before. Nothing polls: with no ref moving, the server sleeps.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use git_jules::store::eventlog::checkpoint::PassedOver;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer};

use git_jules::capabilities::mail::api as mail;

use super::INBOX_URI;

/// A ref change is a lock file renamed into place; a fetch moves several refs in a row. Waiting this long
/// after the first event folds a burst into one look at the inbox.
const SETTLE: Duration = Duration::from_millis(15);

/// Set (to anything) to have the watcher write one line to stderr after each look at the inbox:
/// `git-jules mcp: inbox checked at TIP…: N new`. A hook for the tests, which must tell "no notification
/// was sent" from "none was sent yet": they wait for the line naming the tip they wrote, then count.
pub const TRACE_ENV: &str = "GIT_JULES_MCP_TRACE";

/// Start watching; the returned watcher stops when dropped.
pub fn spawn(
    common_dir: PathBuf,
    dir: PathBuf,
    persona: String,
    subscribers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
    passed_over: Arc<PassedOver>,
) -> anyhow::Result<notify::RecommendedWatcher> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = git_jules::kit::refwatch::watch(&common_dir, move || {
        let _ = tx.send(());
    })?;

    let trace = std::env::var_os(TRACE_ENV).is_some();
    tokio::spawn(async move {
        let unread = |dir: PathBuf, persona: String| {
            let passed_over = passed_over.clone();
            async move {
                tokio::task::spawn_blocking(move || unread_ids(&dir, &persona, passed_over))
                    .await
                    .unwrap_or_default()
            }
        };
        let (mut seen, _) = unread(dir.clone(), persona.clone()).await;
        while rx.recv().await.is_some() {
            tokio::time::sleep(SETTLE).await;
            while rx.try_recv().is_ok() {}
            let (now, tips) = unread(dir.clone(), persona.clone()).await;
            let arrived = now.difference(&seen).count();
            seen = now;
            if arrived > 0 {
                let peers: Vec<Peer<RoleServer>> = match subscribers.lock() {
                    Ok(subs) => subs.clone(),
                    Err(_) => Vec::new(),
                };
                for peer in peers {
                    let _ = peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(INBOX_URI))
                        .await;
                }
            }
            // After the notifications: a test that reads this line knows what this look sent.
            if trace {
                eprintln!(
                    "git-jules mcp: inbox checked at {}: {arrived} new",
                    tips.join(" ")
                );
            }
        }
    });
    Ok(watcher)
}

/// The ids of the persona's unread messages, and the mail log's tips they were read at; empty when there
/// is no mail log or it cannot be read now (a read error here only delays a notification to the next ref
/// change). A checkpoint its read passes over is recorded in the session's `passed_over`: the next tool
/// result says it (this read may be the one that replays, before any call).
fn unread_ids(
    dir: &Path,
    persona: &str,
    passed_over: Arc<PassedOver>,
) -> (BTreeSet<String>, Vec<String>) {
    let read = || -> git_jules::Result<(BTreeSet<String>, Vec<String>)> {
        let mut ws = git_jules::Workspace::open(dir)?;
        ws.share_passed_over(passed_over);
        let tips: Vec<String> = mail::tips(&ws)?.iter().map(|id| id.to_string()).collect();
        if tips.is_empty() {
            return Ok((BTreeSet::new(), tips));
        }
        // What `mail inbox --unread` lists (the `mail_inbox` tool with `unread`), through the same use case.
        let unread = git_jules::capabilities::mail::view::Filter {
            unread: true,
            ..Default::default()
        };
        let listing = mail::inbox(&ws, persona, &unread)?;
        Ok((
            listing.list.messages.into_iter().map(|m| m.id).collect(),
            tips,
        ))
    };
    read().unwrap_or_default()
}
